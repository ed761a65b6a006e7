package dev.ragls.core.json;

/** A value that knows its JSON form (maps, lists, strings, numbers, booleans, null). */
public interface JsonWritable {
    Object toJson();
}

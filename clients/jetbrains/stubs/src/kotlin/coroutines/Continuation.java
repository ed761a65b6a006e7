// Test-only signature stub of kotlin.coroutines.Continuation from Kotlin stdlib 2.x (bundled with the IntelliJ Platform); see stubs/README.md.
package kotlin.coroutines;

public interface Continuation<T> {
}

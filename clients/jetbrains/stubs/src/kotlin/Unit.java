// Test-only signature stub of kotlin.Unit from Kotlin stdlib 2.x (bundled with the IntelliJ Platform); see stubs/README.md.
package kotlin;

public final class Unit {
    public static final Unit INSTANCE = new Unit();

    private Unit() {
    }
}

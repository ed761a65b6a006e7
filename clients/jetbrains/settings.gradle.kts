// ragls JetBrains plugin. The root project is the IDE plugin (IntelliJ Platform Gradle Plugin 2.x);
// :core is the IDE-independent library it bundles (plain Java 17, no IntelliJ or LSP4IJ imports).
rootProject.name = "ragls-jetbrains"

plugins {
    // lets Gradle download the JDK 21 toolchain the 2024.3 platform needs, if it is not installed
    id("org.gradle.toolchains.foojay-resolver-convention") version "1.0.0"
}

include("core")

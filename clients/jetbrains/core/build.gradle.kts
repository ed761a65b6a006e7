// IDE-independent core: plain Java 17, no IntelliJ or LSP4IJ imports; its one library is Gson
// (the JSON of the rag/* payloads), which the IDE and LSP4IJ provide at run time, so the plugin
// does not bundle it. CI builds and tests it with javac, Debian's JUnit 5 and Debian's Gson 2.10
// (see Makefile); this file lets Gradle do the same on a developer machine: ./gradlew :core:test
plugins {
    `java-library`
}

repositories {
    mavenCentral()
}

dependencies {
    // Gson 2.10+ reads records (the protocol types); provided by the IDE, not bundled
    compileOnly("com.google.code.gson:gson:${providers.gradleProperty("gsonVersion").get()}")
    testImplementation("com.google.code.gson:gson:${providers.gradleProperty("gsonVersion").get()}")
    testImplementation(platform("org.junit:junit-bom:${providers.gradleProperty("junitVersion").get()}"))
    testImplementation("org.junit.jupiter:junit-jupiter")
    testRuntimeOnly("org.junit.platform:junit-platform-launcher")
}

tasks.withType<JavaCompile>().configureEach {
    options.encoding = "UTF-8"
    options.release = 17
}

tasks.test {
    useJUnitPlatform()
    // RealServerTest needs RAGLS_SERVER (absolute path to ragls) and the fixture; without a
    // server it is skipped (outside CI).
    environment("RAGLS_FIXTURE", rootProject.file("../../tests/fixtures/polyglot").absolutePath)
    System.getenv("RAGLS_SERVER")?.let { environment("RAGLS_SERVER", it) }
    testLogging {
        events("passed", "skipped", "failed")
    }
}

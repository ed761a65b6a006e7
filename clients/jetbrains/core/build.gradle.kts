// IDE-independent core: plain Java 17, no IntelliJ, LSP4IJ or third-party imports (it has its
// own small JSON parser). CI builds and tests it with javac and Debian's JUnit 5 (see Makefile);
// this file lets Gradle do the same on a developer machine: ./gradlew :core:test
plugins {
    `java-library`
}

repositories {
    mavenCentral()
}

dependencies {
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

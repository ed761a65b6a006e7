// Builds the installable plugin zip: ./gradlew buildPlugin -> build/distributions/ragls-<version>.zip
import org.jetbrains.intellij.platform.gradle.tasks.VerifyPluginTask.FailureLevel

plugins {
    id("java")
    // IntelliJ Platform Gradle Plugin: 2.18.1 is in the plugin's own CHANGELOG (2026-07-10); needs Gradle 9.0+
    id("org.jetbrains.intellij.platform") version "2.18.1"
}

group = providers.gradleProperty("pluginGroup").get()
version = providers.gradleProperty("pluginVersion").get()

repositories {
    mavenCentral()
    intellijPlatform {
        defaultRepositories()
    }
}

dependencies {
    // the IDE-independent core (protocol models, <rag_context>, status text, chat client) goes
    // into the plugin's lib/ folder as its own jar
    implementation(project(":core"))

    intellijPlatform {
        intellijIdeaCommunity(providers.gradleProperty("platformVersion"))
        // LSP4IJ brings LSP4J and Gson; the plugin must not bundle its own copies
        plugin("com.redhat.devtools.lsp4ij", providers.gradleProperty("lsp4ijVersion").get())
        pluginVerifier()
        zipSigner()
    }
}

java {
    // IntelliJ Platform 2024.2+ runs on Java 21; the core stays at Java 17 (see core/build.gradle.kts)
    toolchain {
        languageVersion = JavaLanguageVersion.of(21)
    }
}

tasks.withType<JavaCompile>().configureEach {
    options.encoding = "UTF-8"
    options.release = 21
}

intellijPlatform {
    // no Configurable needs indexing for Settings search beyond its name; skip the slow IDE run
    buildSearchableOptions = false

    pluginConfiguration {
        id = "dev.ragls.jetbrains"
        name = "ragls"
        version = providers.gradleProperty("pluginVersion")
        ideaVersion {
            sinceBuild = providers.gradleProperty("pluginSinceBuild")
            untilBuild = provider { null }
        }
    }

    // ./gradlew verifyPlugin: IntelliJ Plugin Verifier against the IDEs JetBrains recommends for the
    // since/until range; fails on broken binary compatibility, an invalid plugin, missing dependencies,
    // and any use of API scheduled for removal or internal API
    pluginVerification {
        failureLevel = listOf(
            FailureLevel.COMPATIBILITY_PROBLEMS,
            FailureLevel.INVALID_PLUGIN,
            FailureLevel.MISSING_DEPENDENCIES,
            FailureLevel.SCHEDULED_FOR_REMOVAL_API_USAGES,
            FailureLevel.INTERNAL_API_USAGES,
        )
        ides {
            recommended()
        }
    }
}

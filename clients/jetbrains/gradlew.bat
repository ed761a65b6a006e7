@rem Gradle launcher for the ragls JetBrains plugin (Windows).
@rem Runs gradle\wrapper\gradle-wrapper.jar (Gradle 9.4.1's wrapper); without it, the gradle on PATH.
@rem Regenerate jar and scripts with an installed Gradle 9.x:  gradle wrapper --gradle-version 9.4.1
@echo off
setlocal
set APP_HOME=%~dp0
set WRAPPER_JAR=%APP_HOME%gradle\wrapper\gradle-wrapper.jar
if exist "%WRAPPER_JAR%" (
  if defined JAVA_HOME (set JAVACMD=%JAVA_HOME%\bin\java.exe) else (set JAVACMD=java.exe)
  "%JAVACMD%" %JAVA_OPTS% %GRADLE_OPTS% "-Dorg.gradle.appname=gradlew" -classpath "%WRAPPER_JAR%" org.gradle.wrapper.GradleWrapperMain %*
  exit /b %ERRORLEVEL%
)
where gradle >nul 2>nul
if %ERRORLEVEL% equ 0 (
  echo gradlew: no gradle-wrapper.jar; using gradle from PATH ^(run "gradle wrapper --gradle-version 9.4.1" once^) 1>&2
  gradle -p "%APP_HOME%." %*
  exit /b %ERRORLEVEL%
)
echo gradlew: gradle\wrapper\gradle-wrapper.jar is missing and no gradle is on PATH. 1>&2
echo Install Gradle 9.x, then run: gradle wrapper --gradle-version 9.4.1 1>&2
exit /b 1

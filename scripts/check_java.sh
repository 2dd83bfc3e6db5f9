#!/bin/sh
# Check that a Java 17+ runtime exists (Spark 4 needs it); exit 1 with a plain message if not.
# Looks where Spark looks: $JAVA_HOME/bin/java first, then java on PATH.
set -u
minimum=17
hint="Install a Java ${minimum}+ runtime, e.g. 'sudo apt-get install openjdk-17-jre-headless' (Debian/Ubuntu) or 'brew install openjdk@17' (macOS), or set JAVA_HOME to one."

if [ -n "${JAVA_HOME:-}" ] && [ -x "${JAVA_HOME}/bin/java" ]; then
    java="${JAVA_HOME}/bin/java"
elif command -v java >/dev/null 2>&1; then
    java="$(command -v java)"
else
    echo "faq needs Java ${minimum} or newer, but no 'java' is on PATH and JAVA_HOME is not set." >&2
    echo "$hint" >&2
    exit 1
fi

# `java -version` prints e.g.: openjdk version "17.0.15" 2025-04-15   (Java 8: "1.8.0_392")
line="$("$java" -version 2>&1 | grep -i 'version' | head -n 1)"
version="$(printf '%s\n' "$line" | sed -n 's/.*version "\([0-9][0-9]*\)\(\.\([0-9][0-9]*\)\)\{0,1\}.*/\1 \3/p')"
major="${version%% *}"
minor="${version#* }"
if [ "$major" = "1" ]; then
    major="$minor"
fi
case "$major" in
    ''|*[!0-9]*)
        echo "faq needs Java ${minimum} or newer; could not read the version of $java ('$line')." >&2
        echo "$hint" >&2
        exit 1
        ;;
esac
if [ "$major" -lt "$minimum" ]; then
    echo "faq needs Java ${minimum} or newer, but $java is Java $major." >&2
    echo "$hint" >&2
    exit 1
fi
echo "Java $major found ($java)."

#!/bin/sh
# Every artifact installable without a checkout, as Maven Central would serve
# it (run by make test-java after the tests):
#   1. mvn deploy to a file repository in a temp directory;
#   2. each artifact there has its JAR, -sources and -javadoc JARs and a POM
#      with no parent, the same POM inside its JAR, and threadtime-parent is
#      not there; each POM has what Maven Central requires (name,
#      description, url, licenses, developers, scm), url and scm as the
#      release gave them;
#   2b. a deploy to a repository that is not a file: one refuses to start
#      while the url and scm are not given, and says which to give;
#   3. a small project that depends on threadtime and threadtime-micrometer
#      builds and runs from that repository alone: offline, with a local
#      repository that holds every other artifact Maven has here but no
#      io.threadtime one;
#   4. mvn install:install-file -Dfile=<JAR>, with nothing else given,
#      installs the API's and the agent's JARs under their own coordinates.
# Nothing is installed into the user's local repository.
# Usage: java/publish-test.sh MVN_ARGS... (java.mk passes the toolchains and JDKs)
set -eu
cd "$(dirname "$0")"
version=0.1.0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "publish-test: $*" >&2; exit 1; }

repo=$tmp/repo
# What a release gives (java/pom.xml): the project has no public home yet,
# so these name none (.invalid is a top-level domain reserved never to exist).
url=https://threadtime.invalid/home scm_url=https://threadtime.invalid/src scm_conn=scm:git:https://threadtime.invalid/src.git
release="-Dthreadtime.url=$url -Dthreadtime.scm.url=$scm_url -Dthreadtime.scm.connection=$scm_conn"
# shellcheck disable=SC2086 # $release is three options
mvn "$@" $release -DskipTests -DskipITs -Dmaven.install.skip=true deploy -DaltDeploymentRepository=local::file://"$repo" \
    >"$tmp/deploy.log" 2>&1 || { tail -40 "$tmp/deploy.log"; fail "mvn deploy to file://$repo failed"; }

# central_pom FILE: what Maven Central requires of a POM, with url and scm
# those given above; one line per element missing or wrong.
central_pom() {
    python3 - "$1" "$url" "$scm_url" "$scm_conn" <<'PY'
import sys
import xml.etree.ElementTree as ET
path, url, scm_url, scm_conn = sys.argv[1:]
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
pom = ET.parse(path).getroot()
def text(p):
    e = pom.find(p, ns)
    return (e.text or "").strip() if e is not None else ""
want = {"m:name": None, "m:description": None, "m:url": url, "m:licenses/m:license/m:name": "Apache-2.0",
        "m:licenses/m:license/m:url": "https://www.apache.org/licenses/LICENSE-2.0.txt",
        "m:developers/m:developer/m:name": "The threadtime developers", "m:scm/m:url": scm_url,
        "m:scm/m:connection": scm_conn}
bad = [f"{p.replace('m:', '')}: {text(p)!r}" + (f", not {v!r}" if v else "")
       for p, v in want.items() if not text(p) or (v and text(p) != v)]
print("; ".join(bad))
PY
}

artifacts="threadtime threadtime-agent threadtime-otel threadtime-micrometer threadtime-spring-boot"
for a in $artifacts; do
    d=$repo/io/threadtime/$a/$version
    for f in "$a-$version.jar" "$a-$version-sources.jar" "$a-$version-javadoc.jar" "$a-$version.pom"; do
        [ -s "$d/$f" ] || fail "$a: no $f in the deployed repository"
    done
    ! grep -q "<parent>" "$d/$a-$version.pom" || fail "$a: its deployed POM names a parent"
    python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
        "$d/$a-$version.jar" "META-INF/maven/io.threadtime/$a/pom.xml" >"$tmp/inside.pom" 2>/dev/null ||
        fail "$a: no POM inside its JAR"
    ! grep -q "<parent>" "$tmp/inside.pom" || fail "$a: the POM inside its JAR names a parent"
    grep -q "<groupId>io.threadtime</groupId>" "$tmp/inside.pom" || fail "$a: the POM inside its JAR has no groupId"
    for pom in "$d/$a-$version.pom" "$tmp/inside.pom"; do
        missing=$(central_pom "$pom") && [ -z "$missing" ] ||
            fail "$a: $(basename "$pom") lacks what Maven Central requires: $missing"
    done
done
[ ! -e "$repo/io/threadtime/threadtime-parent" ] || fail "threadtime-parent was published"

# A deploy elsewhere without the url and scm, or with one of them missing:
# refused in the first module's validate phase, before anything is built or
# sent (the .invalid host is never reached).
for given in "" "-Dthreadtime.url=$url -Dthreadtime.scm.url=$scm_url"; do
    # shellcheck disable=SC2086 # $given is options
    if mvn "$@" $given -DskipTests -DskipITs deploy -DaltDeploymentRepository=central::https://central.invalid/repo \
        >"$tmp/refused.log" 2>&1; then
        fail "a deploy to https://central.invalid/repo with '${given:-nothing}' given did not refuse"
    fi
    grep -q "threadtime: a deploy to central::https://central.invalid/repo needs .*-Dthreadtime.url=URL" "$tmp/refused.log" ||
        { tail -20 "$tmp/refused.log"; fail "a deploy elsewhere without the url and scm failed without saying why"; }
done

# A local repository with every artifact this machine's has, but none of
# threadtime's: what comes from io.threadtime must come from $repo.
home=${MAVEN_REPO:-$HOME/.m2/repository}
seed() {
    cp -al "$home" "$1" 2>/dev/null || cp -a "$home" "$1"
    rm -rf "$1/io/threadtime"
}
seed "$tmp/local"
mkdir -p "$tmp/app/src/main/java/app"
cat >"$tmp/app/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>app</groupId>
  <artifactId>app</artifactId>
  <version>1</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <repositories>
    <repository><id>published</id><url>file://$repo</url></repository>
  </repositories>
  <dependencies>
    <dependency><groupId>io.threadtime</groupId><artifactId>threadtime</artifactId><version>$version</version></dependency>
    <dependency><groupId>io.threadtime</groupId><artifactId>threadtime-micrometer</artifactId><version>$version</version></dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
      <plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
      <plugin><artifactId>maven-dependency-plugin</artifactId><version>3.8.1</version></plugin>
    </plugins>
  </build>
</project>
POM
cat >"$tmp/app/src/main/java/app/Main.java" <<'JAVA'
package app;

public class Main {
    public static void main(String[] args) {
        System.out.println("cpu " + io.threadtime.ThreadTime.currentThreadCpuTime()
                + " meter " + io.threadtime.micrometer.ThreadTimeMeterBinder.REQUEST_CPU);
    }
}
JAVA
# Offline, but file: repositories still answer (the resolver's offline.protocols).
(cd "$tmp/app" && mvn -B -q -o -Daether.offline.protocols=file -Dmaven.repo.local="$tmp/local" \
    compile dependency:build-classpath -Dmdep.outputFile=cp.txt -Dmdep.includeScope=runtime) >"$tmp/app.log" 2>&1 ||
    { tail -30 "$tmp/app.log"; fail "a project depending on threadtime did not build from the published repository alone"; }
grep -q "$tmp/local/io/threadtime/threadtime/$version/threadtime-$version.jar" "$tmp/app/cp.txt" ||
    fail "the app's class path has no threadtime from the published repository: $(cat "$tmp/app/cp.txt")"
out=$(java --enable-native-access=ALL-UNNAMED -cp "$tmp/app/target/classes:$(cat "$tmp/app/cp.txt")" app.Main 2>/dev/null) ||
    fail "the app did not run"
case "$out" in "cpu "[1-9]*" meter threadtime.http.server.requests.cpu") ;; *) fail "the app printed: $out" ;; esac

# A JAR alone, installed with no coordinates given: the API's and the agent's
# (whose shaded JAR must hold only its own POM).
seed "$tmp/local2"
for a in threadtime threadtime-agent; do
    mvn -B -q -o -Dmaven.repo.local="$tmp/local2" install:install-file \
        -Dfile="$repo/io/threadtime/$a/$version/$a-$version.jar" >"$tmp/install.log" 2>&1 ||
        { tail -20 "$tmp/install.log"; fail "mvn install:install-file -Dfile=$a-$version.jar failed"; }
    [ -s "$tmp/local2/io/threadtime/$a/$version/$a-$version.jar" ] &&
        [ -s "$tmp/local2/io/threadtime/$a/$version/$a-$version.pom" ] ||
        fail "install:install-file did not install io.threadtime:$a:$version"
done
echo "publish-test: 5 artifacts deployed with sources, javadoc and a parentless POM holding what Maven Central requires;" \
    "a deploy elsewhere refused without the url and scm; an app built from them alone; install-file works for the API and the agent"

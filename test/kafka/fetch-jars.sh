#!/usr/bin/env bash
# Fetches the Apache Kafka broker jars named by test/kafka/pom.xml into a cache directory and prints
# that directory on stdout. Idempotent: a cache holding `.complete` is used as it is. The cache is
# $SVCDB_KAFKA_CACHE, else $HOME/.cache/svcdb-test/kafka-<version> (test/helpers/kafka-real.ts
# computes the same path). Maven's progress and errors go to stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/pom.xml" | head -n 1)
[[ -n "$version" ]] || { echo "fetch-jars: no <kafka.version> in $here/pom.xml" >&2; exit 2; }
cache=${SVCDB_KAFKA_CACHE:-$HOME/.cache/svcdb-test/kafka-$version}

if [[ -f "$cache/.complete" ]]; then
  echo "$cache"
  exit 0
fi
command -v mvn >/dev/null 2>&1 || { echo "fetch-jars: mvn is not installed (apt-get install maven)" >&2; exit 2; }

mkdir -p "$(dirname "$cache")"
partial=$(mktemp -d "$cache.partial.XXXXXX")
trap 'rm -rf "$partial"' EXIT
mvn -q -B -Dstyle.color=never -f "$here/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$partial" >&2
compgen -G "$partial/kafka_2.13-$version.jar" >/dev/null || { echo "fetch-jars: kafka_2.13-$version.jar missing after mvn" >&2; exit 1; }
touch "$partial/.complete"
# Another fetch may have finished meanwhile: keep its copy. Otherwise replace an incomplete one.
if [[ ! -f "$cache/.complete" ]]; then
  rm -rf "$cache"
  mv -T "$partial" "$cache"
fi
echo "$cache"

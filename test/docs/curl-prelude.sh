# Sourced before the docs' examples (test/docs/examples.test.ts): curl fails the script on an
# unexpected 4xx/5xx or no answer; `export SVC_EXPECT=<status>` (from a `# expect:` line) allows one.
set -euo pipefail
curl() {
  local out status expect="${SVC_EXPECT:-}"
  unset SVC_EXPECT
  out=$(command curl -sS --max-time 20 -w '\n__STATUS__%{http_code}' "$@") || { echo "no answer: curl $*" >&2; return 97; }
  status="${out##*__STATUS__}"
  printf '%s\n' "${out%__STATUS__*}"
  if [[ -n "$expect" ]]; then
    [[ "$status" == "$expect" ]] || { echo "expected HTTP $expect, got $status: curl $*" >&2; return 98; }
  elif (( status >= 400 )); then
    echo "HTTP $status: curl $*" >&2
    return 99
  fi
}

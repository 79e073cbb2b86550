# Sourced before the docs' examples (test/docs/examples.test.ts): curl fails the script on an
# unexpected 4xx/5xx, no answer, a request that reached no route, or a JSON answer that does not
# parse; `export SVC_EXPECT=<status>` (from a `# 404` comment) allows one status for the next call.
set -euo pipefail
curl() {
  local out status ctype body expect="${SVC_EXPECT:-}"
  unset SVC_EXPECT
  out=$(command curl -sS --max-time 20 -w '\n__STATUS__%{http_code} %{content_type}' "$@") || { echo "no answer: curl $*" >&2; return 97; }
  status="${out##*__STATUS__}"
  ctype="${status#* }"
  status="${status%% *}"
  body="${out%__STATUS__*}"
  printf '%s\n' "$body"
  if [[ "$body" == *'no route for'* ]]; then
    echo "reached no route: curl $*" >&2
    return 96
  fi
  if [[ "$ctype" == application/json* ]] && [[ " $* " != *' -i '* && " $* " != *' -si '* ]] && ! printf '%s' "$body" | jq -e . >/dev/null 2>&1; then
    echo "the JSON answer does not parse: curl $*" >&2
    return 95
  fi
  if [[ -n "$expect" ]]; then
    [[ "$status" == "$expect" ]] || { echo "expected HTTP $expect, got $status: curl $*" >&2; return 98; }
  elif (( status >= 400 )); then
    echo "HTTP $status: curl $*" >&2
    return 99
  fi
}

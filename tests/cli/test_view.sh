#!/usr/bin/env bash
# trowel view: the server's safety (token, Host, paths, broken entries, many
# requests at once), downloads equal to extract/convert, and the page in a
# real headless browser (Debian's chromium driven by playwright-core): for
# one file of each family, every kind of preview draws what it should.
# Screenshots are kept in $TROWEL_VIEW_SHOTS (default: beside the build).
. "$(dirname "$0")/lib.sh"

"$TROWEL" view --help >/dev/null 2>&1 || skip_all "trowel was built without libmicrohttpd"
have_cmd curl || skip_all "curl is missing"
have_cmd python3 || skip_all "python3 is missing"

# libmicrohttpd (and the TLS stack behind it) is loaded when view starts,
# not linked: every other command would pay for loading it.
if have_cmd ldd; then
  assert_eq "trowel is not linked with libmicrohttpd" "" "$(ldd "$TROWEL" | grep -E 'microhttpd|gnutls')"
fi
# Without the library (hidden in a mount namespace of its own), view says
# so before it reads any file, and exits 1.
mhd_lib=$(ldconfig -p 2>/dev/null | awk '/libmicrohttpd\.so\.[0-9]+ / { print $NF; exit }')
if [ -n "$mhd_lib" ] && unshare -m true 2>/dev/null; then
  run unshare -m sh -c 'mount --bind /dev/null "$1" && exec "$2" view --no-browser /nonexistent' \
    sh "$mhd_lib" "$TROWEL"
  assert_rc "view without libmicrohttpd: exit 1" 1
  assert_contains "view without libmicrohttpd: says so" "$ERR" "cannot load libmicrohttpd"
  assert_not_contains "view without libmicrohttpd: before reading any file" "$ERR" "nonexistent"
else
  skip "unshare -m is not allowed here: view without libmicrohttpd"
fi

# ---- inputs: the samples make run builds, and corpus files
export TROWEL_SAMPLES="$WORK/samples"
"$TROWEL_SOURCE/scripts/run-samples.sh" "$(dirname "$TROWEL")" >/dev/null 2>&1 ||
  fail "run-samples.sh made the samples"
S=$TROWEL_SAMPLES
C=$TROWEL_CORPUS
files=("$S/cine/vol/PART01" "$S/cine/assets/WALK.ANI" "$S/cine/assets/BOOM.AMI" "$S/cine/assets/ROOM.PI1"
       "$S/cine/assets/AUTO00.PRC" "$S/tres/world.grf" "$S/tres/hills.wtd" "$S/tres/pid/lvl-130.pid"
       "$S/valve/scenes.image" "$S/valve/intro.bvcd")
corpus=0
if [ -f "$C/volition/rfg/dlcp01_activities.vpp_pc" ] && [ -f "$C/scumm/openquest/tentacle.000" ]; then
  corpus=1
  files+=("$C/volition/rfg/dlcp01_activities.vpp_pc" "$C/scumm/openquest/tentacle.000" "$C/scumm/openquest/zif.cost")
else
  skip "the shared corpus (volition/rfg, scumm/openquest) is absent"
fi
# A damaged packfile: the first 40,000 bytes of a real one.
if [ $corpus = 1 ]; then
  head -c 40000 "$C/volition/rfg/dlcp01_activities.vpp_pc" >"$WORK/cut.vpp_pc"
  files+=("$WORK/cut.vpp_pc")
fi

# ---- start
"$TROWEL" view --no-browser "${files[@]}" >"$WORK/url" 2>"$WORK/view.err" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do [ -s "$WORK/url" ] && break; sleep 0.1; done
URL=$(head -n 1 "$WORK/url")
case "$URL" in
  http://127.0.0.1:*/\?token=*) pass "the first line is the URL with its token" ;;
  *) fail "the first line is the URL (got '$URL')"; finish ;;
esac
PORT=${URL#http://127.0.0.1:}; PORT=${PORT%%/*}
TOKEN=${URL#*token=}
BASE="http://127.0.0.1:$PORT"
if [ $corpus = 1 ]; then
  assert_contains "a damaged file is named once on stderr" "$(cat "$WORK/view.err")" "cut.vpp_pc: damaged"
fi

code() { curl -s -o "$WORK/body" -w '%{http_code}' "$@"; }
api() { curl -s --cookie "trowel_token=$TOKEN" "$BASE/api/$1"; }

# ---- safety
assert_eq "no token: 403" 403 "$(code "$BASE/")"
assert_eq "no token on the API: 403" 403 "$(code "$BASE/api/children")"
assert_eq "a wrong token: 403" 403 "$(code "$BASE/?token=0123456789abcdef0123456789abcdef")"
assert_eq "a wrong cookie: 403" 403 "$(code --cookie trowel_token=nope "$BASE/api/children")"
assert_eq "a wrong Host (DNS rebinding): 421" 421 "$(code -H "Host: evil.example:$PORT" "$URL")"
assert_eq "Host localhost is fine" 200 "$(code -H "Host: localhost:$PORT" "$URL")"
assert_eq "POST is refused" 405 "$(code -X POST --cookie "trowel_token=$TOKEN" "$BASE/api/children")"
for p in "/../../../../etc/passwd" "/static/../../../../etc/passwd" "/static/%2e%2e/%2e%2e/etc/passwd" \
         "/static//etc/passwd" "/static/three/../../../etc/passwd" "/api/raw?n=-1" "/api/raw?n=99999999" \
         "/api/raw?n=../../etc/passwd" "/api/find?path=/etc/passwd" "/api/find?path=../../etc/passwd"; do
  c=$(code --path-as-is --cookie "trowel_token=$TOKEN" "$BASE$p")
  case "$c" in 4??) pass "$p: $c" ;; *) fail "$p answered $c" ;; esac
  if grep -q 'root:' "$WORK/body"; then fail "$p served /etc/passwd"; fi
done
headers=$(curl -s -D - -o /dev/null "$URL")
assert_contains "the first page sets the token cookie" "$headers" "trowel_token=$TOKEN; Path=/; HttpOnly; SameSite=Strict"
assert_contains "a strict Content-Security-Policy" "$headers" "Content-Security-Policy: default-src 'none'; script-src 'self'"
assert_eq "the cookie alone opens the API" 200 "$(code --cookie "trowel_token=$TOKEN" "$BASE/api/children")"

# ---- nodes by path, downloads = extract / convert
find_id() { api "find?path=$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'; }
id=$(find_id ROOM.PI1)
curl -s --cookie "trowel_token=$TOKEN" "$BASE/api/convert?n=$id&to=png&dl=1" -o "$WORK/room-view.png"
"$TROWEL" convert "$S/cine/assets/ROOM.PI1" --to png -o "$WORK/room-cli.png"
assert_same_file "a picture's download is convert's bytes" "$WORK/room-cli.png" "$WORK/room-view.png"
id=$(find_id "PART01/ROBOT.SET" 2>/dev/null || true)
if [ -n "$id" ]; then
  curl -s --cookie "trowel_token=$TOKEN" "$BASE/api/raw?n=$id&dl=1" -o "$WORK/robot-view"
  mkdir -p "$WORK/x"; "$TROWEL" extract -C "$WORK/x" "$S/cine/vol/PART01" ROBOT.SET
  assert_same_file "an entry's download is extract's bytes" "$WORK/x/ROBOT.SET" "$WORK/robot-view"
else
  fail "PART01/ROBOT.SET is found by path"
fi
if [ $corpus = 1 ]; then
  id=$(find_id "cut.vpp_pc")
  kids=$(api "children?n=$id")
  assert_contains "a damaged packfile lists what can be read" "$kids" '"name":"dlc_ORaid_07_08_Level_1.str2_pc"'
  info=$(api "info?n=$id")
  assert_contains "its problems are listed" "$info" '"problem_count":6'
  assert_contains "a cut entry is marked damaged in the tree" "$kids" '"name":"dlc_activity_containers.asm_pc","size":598,"packed_size":598,"damaged":true'
  broken=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"][-1]["id"])' <<<"$kids")
  assert_eq "a broken entry answers an error" 422 "$(code --cookie "trowel_token=$TOKEN" "$BASE/api/raw?n=$broken")"
  assert_contains "naming the cause" "$(cat "$WORK/body")" '"error":'
  assert_eq "the server is still up" 200 "$(code --cookie "trowel_token=$TOKEN" "$BASE/api/children")"
fi
# Many requests at once: every one answered.
seq 60 | xargs -P 20 -I{} curl -s -o /dev/null -w '%{http_code}\n' --cookie "trowel_token=$TOKEN" \
  "$BASE/api/info?n={}" >"$WORK/codes"
assert_eq "60 parallel requests all answered" 60 "$(grep -cE '^(200|404|422)$' "$WORK/codes")"
assert_eq "and none failed the server" 200 "$(code --cookie "trowel_token=$TOKEN" "$BASE/api/children")"

# ---- the page in a browser
# npm libraries live beside the main build (scripts/deps.sh): build/node,
# also for the sanitizer build.
node_dir=${TROWEL_NODE_DIR:-$(dirname "$TROWEL")/node}
[ -d "$node_dir/node_modules/playwright-core" ] || node_dir=$TROWEL_SOURCE/build/node
if ! have_cmd node || [ ! -x /usr/bin/chromium ] || [ ! -d "$node_dir/node_modules/playwright-core" ]; then
  skip "node, Debian's chromium or playwright-core (scripts/deps.sh test) is missing"
else
  shots=${TROWEL_VIEW_SHOTS:-$(dirname "$TROWEL")/view-shots}
  rm -rf "$shots"; mkdir -p "$shots"
  entries=(PART01 WALK.ANI BOOM.AMI ROOM.PI1 AUTO00.PRC world.grf hills.wtd
           "lvl-130.pid/12345678/3x3.png" scenes.image "scenes.image/89dac6d4.vcd" intro.bvcd)
  [ $corpus = 1 ] && entries+=(dlcp01_activities.vpp_pc "dlcp01_activities.vpp_pc/DLC_HA_08_08.str2_pc"
                               zif.cost tentacle.000 "tentacle.000/room06/cost002.cost" cut.vpp_pc)
  TROWEL_NODE_DIR=$node_dir SHOTS=$shots timeout 300 node "$TROWEL_SOURCE/tests/tools/view_browser.js" \
    "$URL" "${entries[@]}" >"$WORK/page.jsonl" 2>"$WORK/page.err"
  assert_eq "the browser run ends well ($(head -c 300 "$WORK/page.err"))" 0 "$?"
  python3 - "$WORK/page.jsonl" "$corpus" >"$WORK/page.checks" <<'PY'
import json, sys
runs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs[r["entry"]] = r
corpus = sys.argv[2] == "1"
def num(r, key):
    return float(r["data"].get(key, "nan"))
def check(name, ok):
    print(("PASS " if ok else "FAIL ") + name)
def drew(entry, kind):
    r = runs.get(entry)
    ok = r is not None and "timeout" not in r and r["data"].get("trowelReady") == "1" \
        and r["data"].get("trowelPreview") == kind and "trowelError" not in r["data"] and not r["errors"]
    check(f"{entry}: a {kind} preview drew without errors ({r and {k: v for k, v in r.items() if k != 'entry'}})", ok)
    return r if ok else None
if (r := drew("ROOM.PI1", "image")):
    check("background: 320x200, not blank", num(r, "trowelWidth") == 320 and num(r, "trowelHeight") == 200
          and num(r, "trowelNonblank") > 1000)
if (r := drew("lvl-130.pid/12345678/3x3.png", "image")):
    check("PID texture: 3x3 pixels drawn", num(r, "trowelWidth") == 3 and num(r, "trowelNonblank") > 0)
if (r := drew("WALK.ANI", "animation")):
    check("ANI: frames change as it plays and steps", num(r, "trowelDistinctFrames") > 1 and r["paused"] != r["stepped"])
if (r := drew("BOOM.AMI", "audio")):
    check("sample: the player's duration is samples / rate",
          abs(num(r, "trowelDuration") - num(r, "trowelSamples") / num(r, "trowelRate")) < 0.002)
drew("AUTO00.PRC", "text")
drew("PART01", "text")
if (r := drew("world.grf", "3d")):
    check("GRF world: the canvas shows the mesh", num(r, "trowelDrawn") > 500 and num(r, "trowelMeshes") >= 1)
if (r := drew("hills.wtd", "3d")):
    check("terrain: the canvas shows it, with a height map", num(r, "trowelDrawn") > 5000 and "trowelHeightmap" in r["data"])
if (r := drew("scenes.image", "text")):
    check("scenes.image: its scenes listed", num(r, "trowelEntries") == 3)
for e in ("scenes.image/89dac6d4.vcd", "intro.bvcd"):
    if (r := drew(e, "timeline")):
        check(f"{e}: every event on the timeline", num(r, "trowelEvents") == num(r, "trowelEventsTotal") > 0)
if corpus:
    if (r := drew("dlcp01_activities.vpp_pc", "text")):
        check("packfile: 9 entries listed", num(r, "trowelEntries") == 9)
    if (r := drew("dlcp01_activities.vpp_pc/DLC_HA_08_08.str2_pc", "text")):
        check("nested str2: its entry listed", num(r, "trowelEntries") >= 1)
    if (r := drew("zif.cost", "animation")):
        check("costume: frames change", num(r, "trowelDistinctFrames") > 1 and r["paused"] != r["stepped"])
    drew("tentacle.000", "text")
    if (r := drew("tentacle.000/room06/cost002.cost", "animation")):
        check("a game's costume animates", num(r, "trowelFrames") >= 1)
    r = runs.get("cut.vpp_pc")
    check("a damaged packfile opens with what can be read", r is not None and r["data"].get("trowelReady") == "1")
PY
  while read -r verdict name; do
    if [ "$verdict" = PASS ]; then pass "$name"; else fail "$name"; fi
  done <"$WORK/page.checks"
  [ -s "$WORK/page.checks" ] || fail "the page checks ran"
  [ -f "$shots/0.png" ] && pass "screenshots saved in $shots" || fail "screenshots saved"
fi

# ---- Ctrl-C stops it cleanly
kill -INT $pid
wait $pid
assert_eq "SIGINT: exit 0" 0 "$?"
assert_eq "the port is closed" 000 "$(code "$URL")"
finish

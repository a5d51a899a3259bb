#!/usr/bin/env bash
# convert --to json-full compared field by field, for every scene of the
# corpus, with an independent reading (issue 22.10): tests/tools/bvcd_json.py
# reads the ez2 (51 scenes) and tsp (301) images and srctools' BVCD itself,
# from the format notes, and compiles nothing; srctools' text VCDs and a
# hand-written scene holding every field no corpus scene has (timing tags,
# a relative tag, a scene ramp) go through trowel's compiler first, then the
# script reads the BVCD. The script fails on any difference, and on any
# field of the document that no input exercises.
. "${BASH_SOURCE%/*}/lib.sh"

V="$TROWEL_CORPUS/valve"
have_cmd python3 || skip_all "python3 is needed for the independent BVCD reader"
if [ ! -f "$V/ez2/scenes/scenes.image" ] || [ ! -f "$V/tsp/scenes/scenes.image" ]; then
    skip_all "the valve corpus is absent"
fi
TOOL="${BASH_SOURCE%/*}/../tools/bvcd_json.py"

cat >every_field.vcd <<'EOF'
// Choreo version 1
event section "pause"
{
  time 4.5 -1.000000
  param "noaction"
}
actor "Alyx"
{
  channel "audio"
  {
    event speak "hello"
    {
      time 0.25 2.75
      param "alyx.hello"
      param2 "70dB"
      tags
      {
        "mid" 0.5
        "late" 0.75
      }
      cctype "cc_master"
      cctoken "ALYX.HELLO_CC"
      cc_usingcombinedfile
      cc_combinedusesgender
      cc_noattenuate
    }
    event gesture "wave"
    {
      time 1 2.5
      param "g_wave"
      event_ramp
      {
        0.1 0.5
        1.2 1
      }
      sequenceduration 1.5
      absolutetags playback_time
      {
        "apex" 0.4
        "end" 0.9
      }
      absolutetags shifted_time
      {
        "apex" 0.35
        "end" 0.85
      }
      relativetag "mid" "hello"
      lockbodyfacing
      resumecondition
      forceshortmovement
      playoverscript
    }
    event moveto "walk"
    {
      time 0.5 1.5
      param "!target1"
      param2 "Run"
      param3 "!target2"
      distancetotarget 48.5
    }
  }
  channel "face"
  {
    event flexanimation "smile"
    {
      time 0 3
      param ""
      flextimingtags
      {
        "open" 0.25 1
        "shut" 0.625 0
      }
      flexanimations samples_use_time
      {
        "smile" range 0 2
        {
          0.5 0.25 "curve_easein_to_curve_easeout"
          2 1
        }
        "mouth_open" combo
        {
          0.25 0.5
        }
        {
          0.75 0.125 "curve_linear_interp_to_curve_hold"
        }
      }
    }
    event loop "again"
    {
      time 2.9 -1
      param "0.5"
      loopcount "3"
    }
    active "0"
  }
}
scene_ramp
{
  0.5 0.8
  1.5 0.2
}
ignorePhonemes on
EOF

run python3 "$TOOL" "$TROWEL" work "$V/ez2/scenes/scenes.image" "$V/tsp/scenes/scenes.image" \
    "$V/srctools/test_save_binary.bvcd" "$V"/srctools/*.vcd every_field.vcd
assert_rc "every field of every corpus scene as an independent reader gives it" 0
[ "$RC" = 0 ] || printf '%s\n%s\n' "$OUT" "$ERR"
texts=$(find "$V/srctools" -name '*.vcd' | wc -l)
assert_contains "every corpus scene compared" "$OUT" "$((51 + 301 + 1 + texts + 1)) scenes,"
assert_contains "no difference" "$OUT" " 0 differences"
assert_not_contains "every field of the document compared somewhere" "$OUT" "NOT COVERED"
for field in distancetotarget flextimingtags relativetag scene_ramp combo cc_noattenuate; do
    assert_contains "$field is among the fields compared" "$OUT" "$field="
done

finish

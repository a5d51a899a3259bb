#!/usr/bin/env bash
# convert --to json-full of a scene, checked whole against the document it
# must give (not just "is it JSON"): every event, actor and channel field of
# a hand-written VCD with an actor-less event, speech with tags and close
# captions, a gesture with a ramp and absolute tags, a flex track with a
# range, a loop and a scene ramp; and of the same scene through BVCD, where
# tag, ramp and flex values are quantised (x/255, x/4096, truncated).
. "${BASH_SOURCE%/*}/lib.sh"

cat >scene.vcd <<'EOF'
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
      tags
      {
        "mid" 0.5
      }
      cctype "cc_master"
      cctoken "ALYX.HELLO_CC"
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
    }
  }
  channel "face"
  {
    event flexanimation "smile"
    {
      time 0 3
      param ""
      flexanimations samples_use_time
      {
        "smile" range 0 2
        {
          0.5 0.25
          2 1
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
}
ignorePhonemes on
EOF

cat >expected.json <<'EOF'
{
  "events": [
    {
      "type": "section",
      "name": "pause",
      "start": 4.5,
      "end": -1.0,
      "params": [
        "noaction",
        "",
        ""
      ],
      "resumecondition": false,
      "lockbodyfacing": false,
      "fixedlength": false,
      "active": true,
      "forceshortmovement": false,
      "playoverscript": false
    }
  ],
  "actors": [
    {
      "name": "Alyx",
      "active": true,
      "channels": [
        {
          "name": "audio",
          "active": true,
          "events": [
            {
              "type": "speak",
              "name": "hello",
              "start": 0.25,
              "end": 2.75,
              "params": [
                "alyx.hello",
                "",
                ""
              ],
              "resumecondition": false,
              "lockbodyfacing": false,
              "fixedlength": true,
              "active": true,
              "forceshortmovement": false,
              "playoverscript": false,
              "tags": [
                {
                  "name": "mid",
                  "value": 0.5
                }
              ],
              "cctype": "cc_master",
              "cctoken": "ALYX.HELLO_CC",
              "cc_usingcombinedfile": false,
              "cc_combinedusesgender": false,
              "cc_noattenuate": true
            },
            {
              "type": "gesture",
              "name": "wave",
              "start": 1.0,
              "end": 2.5,
              "params": [
                "g_wave",
                "",
                ""
              ],
              "ramp": [
                {
                  "time": 0.10000000149011612,
                  "value": 0.5
                },
                {
                  "time": 1.2000000476837158,
                  "value": 1.0
                }
              ],
              "resumecondition": false,
              "lockbodyfacing": false,
              "fixedlength": false,
              "active": true,
              "forceshortmovement": false,
              "playoverscript": false,
              "playback_time": [
                {
                  "name": "apex",
                  "value": 0.40000000596046448
                },
                {
                  "name": "end",
                  "value": 0.89999997615814209
                }
              ],
              "sequenceduration": 1.5
            }
          ]
        },
        {
          "name": "face",
          "active": false,
          "events": [
            {
              "type": "flexanimation",
              "name": "smile",
              "start": 0.0,
              "end": 3.0,
              "params": [
                "",
                "",
                ""
              ],
              "resumecondition": false,
              "lockbodyfacing": false,
              "fixedlength": false,
              "active": true,
              "forceshortmovement": false,
              "playoverscript": false,
              "flexanimations": [
                {
                  "controller": "smile",
                  "active": true,
                  "min": 0.0,
                  "max": 2.0,
                  "samples": [
                    {
                      "time": 0.5,
                      "value": 0.25
                    },
                    {
                      "time": 2.0,
                      "value": 1.0
                    }
                  ]
                }
              ]
            },
            {
              "type": "loop",
              "name": "again",
              "start": 2.9000000953674316,
              "end": -1.0,
              "params": [
                "0.5",
                "",
                ""
              ],
              "resumecondition": false,
              "lockbodyfacing": false,
              "fixedlength": false,
              "active": true,
              "forceshortmovement": false,
              "playoverscript": false,
              "loopcount": 3
            }
          ]
        }
      ]
    }
  ],
  "scene_ramp": [
    {
      "time": 0.5,
      "value": 0.80000001192092896
    }
  ],
  "ignorePhonemes": true
}
EOF

run "$TROWEL" convert --to json-full scene.vcd -o scene.json
assert_rc "vcd -> json-full: exit 0" 0
assert_same_file "vcd -> json-full: the whole document, exactly" expected.json scene.json

# Through BVCD: the same, but for the quantised values.
run "$TROWEL" convert --to bvcd scene.vcd -o scene.bvcd
assert_rc "vcd -> bvcd: exit 0" 0
run "$TROWEL" convert --to json-full scene.bvcd -o scene-bvcd.json
assert_rc "bvcd -> json-full: exit 0" 0
sed -e '49s/"value": 0.5$/"value": 0.49803921580314636/' \
    -e '71s/"value": 0.5$/"value": 0.49803921580314636/' \
    -e '87s/0.40000000596046448/0.39990234375/' \
    -e '91s/0.89999997615814209/0.89990234375/' \
    -e '127s/"value": 0.25$/"value": 0.24705882370471954/' expected.json >expected-bvcd.json
assert_eq "the five quantised values are the only changes" 5 \
    "$(diff expected.json expected-bvcd.json | grep -c '^<')"
assert_same_file "bvcd -> json-full: the whole document, exactly" expected-bvcd.json scene-bvcd.json

finish

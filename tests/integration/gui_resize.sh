#!/usr/bin/env bash
# The app's window resized, as a person drags its corner or a projector's resolution changes: on
# Mesa's software renderer the window presents its frames in part (app/partial_present.h), and a
# new size is only taken into its buffers when a frame is swapped whole. The window is shrunk
# twice and grown once; at each size the picture must be the very one a window that swaps every
# frame whole (RINGLAB_WHOLE_FRAMES=1) shows after the same resizes. Before the fix, a shrunk
# window showed the old size's frame over its top and the new layout shifted down, cut off.
# Called by ctest as: bash gui_resize.sh <ringlab> <source-dir>. Exit 77 = skipped.
set -uo pipefail
RINGLAB=$(realpath "$1")
SRC=$2
source "$(dirname "$0")/lib/headless.bash"
require_headless_app "$RINGLAB"
for tool in xdotool xwd; do
  command -v $tool > /dev/null || { echo "SKIP: $tool is not installed (scripts/setup.sh installs it)"; exit 77; }
done
export APP_WINDOW_LIB="$(realpath "$(dirname "$0")")/lib/app_window.bash"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ART=${RINGLAB_TEST_ARTIFACTS:-$WORK}
mkdir -p "$ART"
SIZES="1280x720 1000x600 1600x900"

# Inside the virtual display: the app idle in a 1920x1080 window, resized to each size, its
# window dumped after each; then Ctrl+Q, waited for (bounded).
cat > "$WORK/drive.sh" << 'DRIVE'
#!/usr/bin/env bash
set -u
ringlab=$1 out=$2 mode=$3 sizes=$4
source "$APP_WINDOW_LIB"
await_display
if [ "$mode" = whole ]; then export RINGLAB_WHOLE_FRAMES=1; else unset RINGLAB_WHOLE_FRAMES; fi
open_app_window "$out/$mode.log" "$ringlab" gui --width 1920 --height 1080
sleep 2
for size in $sizes; do
  xdotool windowsize "$wid" "${size%x*}" "${size#*x}"
  xdotool mousemove 1919 1079  # outside the window: nothing on it is hovered
  sleep 2.5                    # the layout settles over a few frames, then the window is still
  xwd -id "$wid" -silent > "$out/$mode-$size.xwd"
done
quit_app_window "$out/$mode.log"
exit 0
DRIVE

for mode in partial whole; do
  headless_again 1920x1080x24 "$WORK/drive-$mode.out" bash "$WORK/drive.sh" "$RINGLAB" "$WORK" $mode "$SIZES" ||
    { echo "FAIL the $mode-frame window: $(tail -3 "$WORK/drive-$mode.out")"; exit 1; }
done

fail=0
for size in $SIZES; do
  if python3 - "$WORK/partial-$size.xwd" "$WORK/whole-$size.xwd" "$size" "$SRC" > "$WORK/cmp" 2>&1 << 'PY'
import sys
sys.path.insert(0, sys.argv[4] + "/tests/integration/lib")
from xwd_to_png import read_xwd
(wa, ha, a), (wb, hb, b) = read_xwd(sys.argv[1]), read_xwd(sys.argv[2])
w, h = (int(v) for v in sys.argv[3].split("x"))
assert (wa, ha) == (w, h) == (wb, hb), f"window sizes {wa}x{ha} (in part) and {wb}x{hb} (whole), expected {w}x{h}"
rows = [y for y in range(h) if a[y] != b[y]]
assert not rows, f"{len(rows)} of {h} rows differ from the window that swaps whole frames, rows {rows[0]} to {rows[-1]}"
# Not a blank window either: the menu bar's words and the panes are there.
assert len(set(a[10])) > 30 or len(set(a[h // 2])) > 30, "the window looks blank"
PY
  then echo "ok   resized to $size: the same picture as a window that swaps whole frames"
  else
    echo "FAIL resized to $size: $(tail -1 "$WORK/cmp")"
    python3 "$SRC/tests/integration/lib/xwd_to_png.py" "$WORK/partial-$size.xwd" "$ART/resize-partial-$size.png"
    python3 "$SRC/tests/integration/lib/xwd_to_png.py" "$WORK/whole-$size.xwd" "$ART/resize-whole-$size.png"
    echo "     pictures: $ART/resize-partial-$size.png and $ART/resize-whole-$size.png"
    fail=1
  fi
done
exit $fail

#!/bin/bash
# memcore report's pictures scaled to the data (issue 38 item 6), checked
# as people see them: the SVG drawn by headless Chromium, the text chart
# in an 80-column tmux pane.
#  (a) a step that climbs to 200 MiB under --mem=3G: the usage fills most
#      of the plot's height (the axis ends just above it, the limit named
#      above the chart);
#  (b) a step OOM-killed at --mem=256M: the climb reaches the limit's line;
#  (c) a batch job of three steps: a panel each, the batch step (a shell
#      running srun) folded into "step J.batch: no memory to show";
#  and in all three no two labels overlap, by Chromium's own boxes
#      (getBBox of each <text>, --dump-dom); --plot in an 80x40 tmux pane:
#      no line past 80 columns, the scaled top row, the folded line.
# The screenshots and the capture are in tests/integration/pictures/
# (plot_climb.png, plot_oom.png, plot_steps.png, plot_steps.txt), made
# again only with MC_UPDATE_PICTURES=1; otherwise the new ones are
# compared with them by size and kept beside the test's log.
# guest: no
# guest: why: Chromium and python3-pil are on the host only (test_46)
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=20000 MC_GPUS=2
PROGS=$MEMCORE_BUILD/progs
MEMCORE=$MEMCORE_BUILD/memcore
PY=/usr/bin/python3	# Debian's, with python3-pil
PICS=$MC_TOP/tests/integration/pictures
for p in mc_climb mc_hold; do
	[ -x "$PROGS/$p" ] || mc_die "$PROGS/$p missing: make progs"
done
for c in chromium tmux; do
	command -v $c >/dev/null || mc_skip "$c missing (contrib/install-deps.sh check)"
done
"$PY" -c 'import PIL' 2>/dev/null || mc_skip "python3-pil missing (contrib/install-deps.sh check)"

mc_cluster_start
mc_small_policy
printf '%s\n' "SampleInterval=200ms" >>"$MC_CONF_DIR/memcore.conf"
KEEP=$MC_TOP/tests/integration/.work/logs/$MC_NAME
mkdir -p "$KEEP"

# --- the jobs: (c) in the background, (a) and (b) beside it -------------------
cat >"$MC_WORK/tmp/steps.sh" <<EOF
#!/bin/bash
srun -n1 $PROGS/mc_climb 20 100 160 600
srun -n1 $PROGS/mc_climb 40 100 400 600
srun -n1 $PROGS/mc_hold 60 1
EOF
jc=$(mc_sbatch -n1 --gpus=1 --mem=1G "$MC_WORK/tmp/steps.sh")
assert_match "$jc" "^[0-9]+$" "(c) the three-step batch job is submitted"
mc_run srun -n1 --gpus=1 --mem=3G sh -c \
	"echo \$SLURM_JOB_ID >$MC_WORK/tmp/job-a; exec $PROGS/mc_climb 10 100 200 1500"
assert_rc 0 "(a) the step that climbs to 200 MiB of 3 GiB runs"
ja=$(cat "$MC_WORK/tmp/job-a")
mc_run srun -n1 --gpus=1 --mem=256M sh -c \
	"echo \$SLURM_JOB_ID >$MC_WORK/tmp/job-b; exec $PROGS/mc_climb 8 200 0 0"
assert_ne 0 "$MC_RC" "(b) the climbing step is OOM-killed"
jb=$(cat "$MC_WORK/tmp/job-b")
assert_eq COMPLETED "$(mc_wait_job "$jc" 60)" "(c) the batch job ends"

# --- the SVGs, drawn by Chromium ------------------------------------------------
chrome() { timeout -k 5 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--user-data-dir="$MC_WORK/chromium" --force-device-scale-factor=1 "$@" 2>>"$MC_LOG_DIR/chromium.txt"; }
# draw NAME JOB: memcore report JOB --svg into NAME.svg, its screenshot
# NAME.png (the picture's own size) and its labels' boxes NAME.boxes
# (Chromium's getBBox of each <text>, in the picture's coordinates).
draw() {
	local svg=$MC_WORK/$1.svg w h
	mc_run "$MEMCORE" report "$2" --svg "$svg"
	assert_rc 0 "($1) memcore report $2 --svg"
	read -r w h < <(sed -nE 's/^<svg [^>]* width="([0-9]+)" height="([0-9]+)".*/\1 \2/p' "$svg")
	chrome --window-size="$w,$h" --screenshot="$MC_WORK/$1.png" "file://$svg" >/dev/null
	{ echo '<html><body style="margin:0">'; sed 1d "$svg"
	  cat <<'EOF'
<pre id="boxes"></pre><script>
var r = [];
document.querySelectorAll("svg text").forEach(function (t) {
	var b = t.getBBox(), m = t.getCTM();
	r.push([t.textContent, b.x + m.e, b.y + m.f, b.width, b.height]);
});
document.getElementById("boxes").textContent = JSON.stringify(r);
</script></body></html>
EOF
	} >"$MC_WORK/$1.html"
	chrome --dump-dom "file://$MC_WORK/$1.html" >"$MC_WORK/$1.dom"
	cp "$svg" "$MC_WORK/$1.png" "$KEEP/" 2>/dev/null
	assert_file "$MC_WORK/$1.png" "($1) Chromium drew the SVG ($w x $h)"
}
# check MODE NAME: the picture's checks (python3 + PIL), one line of
# figures on stdout; rc 0 when they hold.
check() {
	"$PY" - "$1" "$MC_WORK/$2" <<'EOF'
import html, json, re, sys
from PIL import Image
mode, base = sys.argv[1], sys.argv[2]
L, T, W, H, PANEL = 90, 52, 780, 220, 340
im = Image.open(base + ".png").convert("RGB")
px = im.load()
def near(p, c, tol=14):
    return all(abs(a - b) <= tol for a, b in zip(p, c))
NR, CACHE, LIMIT = (0x3b, 0x6e, 0xa5), (0xa9, 0xc4, 0xe4), (0xc0, 0x39, 0x2b)
def usage_box(y0):
    ys = [y for y in range(y0 + T - 5, y0 + T + H + 1)
          for x in range(L + 1, L + W, 3)
          if near(px[x, y], NR) or near(px[x, y], CACHE)]
    return (min(ys), max(ys)) if ys else (None, None)
def limit_y(y0):
    rows = [y for y in range(y0 + T - 2, y0 + T + H)
            if sum(near(px[x, y], LIMIT, 30) for x in range(L, L + W, 2)) > W / 4]
    return sum(rows) / len(rows) if rows else None
# labels: no two of Chromium's boxes overlap by more than a pixel each way
dom = open(base + ".dom").read()
boxes = json.loads(html.unescape(re.search(r'<pre id="boxes">(.*?)</pre>', dom, re.S).group(1)))
bad = []
for i, a in enumerate(boxes):
    for b in boxes[:i]:
        dx = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
        dy = min(a[2] + a[4], b[2] + b[4]) - max(a[2], b[2])
        if dx > 1 and dy > 1:
            bad.append("%r over %r" % (a[0], b[0]))
    if a[1] < 0 or a[1] + a[3] > im.size[0] + 1:
        bad.append("%r outside" % a[0])
ok = not bad
if mode == "climb":
    top, bottom = usage_box(0)
    share = (bottom - top) / H if top is not None else 0
    ok = ok and share > 0.6
    print("usage from y %s to %s: %.0f%% of the plot's height; %d labels%s"
          % (top, bottom, 100 * share, len(boxes), "; " + "; ".join(bad) if bad else ""))
elif mode == "oom":
    top, _ = usage_box(0)
    ly = limit_y(0)
    ok = ok and ly is not None and top is not None and abs(top - ly) <= 0.08 * H
    print("limit line at y %s, usage's top at y %s (plot %d..%d); %d labels%s"
          % (ly, top, T, T + H, len(boxes), "; " + "; ".join(bad) if bad else ""))
else:
    panels = im.size[1] // PANEL
    tops = [usage_box(k * PANEL) for k in range(panels)]
    ok = ok and all(t[0] is not None and (t[1] - t[0]) / H > 0.5 for t in tops)
    print("%d panels, usage heights %s; %d labels%s"
          % (panels, [None if t[0] is None else t[1] - t[0] for t in tops],
             len(boxes), "; " + "; ".join(bad) if bad else ""))
sys.exit(0 if ok else 1)
EOF
}

draw climb "$ja"
out=$(check climb climb); rc=$?
mc_log "(a) $out"
assert_eq 0 $rc "(a) the 200 MiB climb fills most of the plot, no labels overlap: $out"
assert_file_contains "$MC_WORK/climb.svg" ">asked 3 GiB (--mem=3G) ↑</text>" "(a) the limit named above the chart with its value"
assert_file_contains "$MC_WORK/climb.svg" ">250 MiB</text>" "(a) the axis' top a round value just above 200 MiB"

draw oom "$jb"
out=$(check oom oom); rc=$?
mc_log "(b) $out"
assert_eq 0 $rc "(b) the OOM climb reaches the limit's line, no labels overlap: $out"
assert_file_contains "$MC_WORK/oom.svg" ">OOM kill</text>" "(b) the OOM kill named"
assert_file_contains "$MC_WORK/oom.svg" ">asked 256 MiB (--mem=256M)</text>" "(b) the limit named at its line"

draw steps "$jc"
out=$(check steps steps); rc=$?
mc_log "(c) $out"
assert_eq 0 $rc "(c) a panel per step that used memory, each filled, no labels overlap: $out"
assert_eq 3 "$(grep -c '^<g class="panel"' "$MC_WORK/steps.svg")" "(c) three panels: $jc.0, $jc.1, $jc.2"
assert_file_contains "$MC_WORK/steps.svg" ">step $jc.batch: no memory to show (32 MiB or less)</text>" "(c) the batch step folded into one line"

# --- --plot in an 80x40 tmux pane ---------------------------------------------
SOCK=$MC_WORK/tmux.sock
mc_at_exit 'tmux -S "$SOCK" kill-server 2>/dev/null'
tmux -S "$SOCK" new-session -d -x 80 -y 40 -s plot \
	"$MEMCORE report $jc --plot; echo MC-PLOT-RC=\$?; sleep 600"
mc_wait_until 30 bash -c "tmux -S '$SOCK' capture-pane -p -t plot -S -300 | grep -q MC-PLOT-RC=" ||
	mc_log "no end of --plot in 30 s"
tmux -S "$SOCK" capture-pane -p -t plot -S -300 | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$MC_WORK/steps.txt"
PANE=$(cat "$MC_WORK/steps.txt")
cp "$MC_WORK/steps.txt" "$KEEP/"
mc_log "(c) --plot at 80 columns:"$'\n'"$PANE"
assert_contains "$PANE" "MC-PLOT-RC=0" "(c) memcore report --plot exits 0"
assert_eq 0 "$(awk 'length($0) > 80' <<<"$PANE" | wc -l)" "(c) no line past 80 columns"
assert_eq 36 "$(awk 'length($0) > 9 && substr($0, 10, 1) == "|"' <<<"$PANE" | wc -l)" "(c) three charts of 12 rows"
assert_match "$(grep -A1 -E '^ +200 MiB \|' <<<"$PANE")" "#" "(c) the 160 MiB step's chart: its top 200 MiB, its bar near the top"
assert_contains "$PANE" "step $jc.batch: no memory to show (32 MiB or less)" "(c) the batch step in one line"
assert_contains "$PANE" "^ above the chart: asked 1 GiB" "(c) the limit above the 160 MiB step's chart, named"

# --- the pictures in the tree ----------------------------------------------------
shrink() {	# PNG -> a palette PNG, small enough to commit
	"$PY" -c 'import sys; from PIL import Image
Image.open(sys.argv[1]).convert("RGB").quantize(colors=32).save(sys.argv[2], optimize=True)' "$1" "$2"
}
for n in climb oom steps; do
	shrink "$MC_WORK/$n.png" "$KEEP/plot_$n.png"
	size=$(stat -c %s "$KEEP/plot_$n.png")
	[ "$size" -lt 61440 ]
	assert_eq 0 $? "($n) the picture is small: $size bytes"
	if [ "${MC_UPDATE_PICTURES:-0}" = 1 ]; then
		cp "$KEEP/plot_$n.png" "$PICS/plot_$n.png"
	elif [ -f "$PICS/plot_$n.png" ]; then
		assert_eq "$("$PY" -c 'import sys; from PIL import Image; print(Image.open(sys.argv[1]).size)' "$PICS/plot_$n.png")" \
			"$("$PY" -c 'import sys; from PIL import Image; print(Image.open(sys.argv[1]).size)' "$KEEP/plot_$n.png")" \
			"($n) the same size as tests/integration/pictures/plot_$n.png"
	fi
done
if [ "${MC_UPDATE_PICTURES:-0}" = 1 ]; then
	cp "$MC_WORK/steps.txt" "$PICS/plot_steps.txt"
	mc_log "pictures written to $PICS"
fi

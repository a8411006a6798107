# tests/integration/corpus/gen_corpus.awk - expands table.txt (its header
# says the rows and the pruning rules) into corpus lines for lib_corpus.sh:
#     NAME | PARTITION | NODES | SBATCH OPTIONS | TAGS
# awk -f gen_corpus.awk [-v only=ver] table.txt
# only=ver: only the version-dependent families (tag ver), for the guests.
# Partition names in the output are "p_" NAME; the placement partitions
# t4 and v100 (the shapes' own) are the test's.
function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
function has(tags, t,   a, n, i) {
	n = split(tags, a, " ")
	for (i = 1; i <= n; i++) if (a[i] == t || index(a[i], t "=") == 1) return 1
	return 0
}
function tagval(tags, t,   a, n, i) {
	n = split(tags, a, " ")
	for (i = 1; i <= n; i++) if (index(a[i], t "=") == 1) return substr(a[i], length(t) + 2)
	return ""
}
# the tags lib_corpus.sh reads: env=, file=, min=, nosrun (no step)
function runtags(tags,   a, n, i, out) {
	out = has(tags, "step") ? "" : "nosrun"
	n = split(tags, a, " ")
	for (i = 1; i <= n; i++)
		if (a[i] ~ /^(env|file|min)=/) out = out (out == "" ? "" : " ") a[i]
	return out
}
function emit(name, part, nodes, opts, tags) {
	printf "%s | %s | %s | %s | %s\n", name, part, nodes, trim(opts), tags
	count++
}
# The pruning rules (table.txt's header): partition kind x memory form
# (m "" = the family gives its own memory).
function keep(k, p, m, only) {
	if (m == "") return only == "ver" ? (k == "plain" || p == "dmg") : (k == "plain" || p == "dmg" || p == "mmc" || k == "excl")
	if (only == "ver" && k == "plain") return m == "none" || m == "m200"
	if (k == "plain") return 1
	if (k == "defmem") return m == "none" && (only != "ver" || p == "dmg")
	if (k == "maxmem") return m == "m200" && (only != "ver" || p == "mmc")
	if (k == "cpus") return m == "none" && only != "ver"
	if (k == "excl") return m == "m200"
	return 0
}
BEGIN { FS = "|" }
/^[ \t]*(#|$)/ { next }
{
	split(trim($1), h, /[ \t]+/)
	kind = h[1]; name = h[2]
	if (kind == "part") { np++; pname[np] = name; pkind[np] = trim($3) }
	else if (kind == "mem") { nm++; mname[nm] = name; mopt[nm] = trim($2) }
	else if (kind == "family") { nf++; fname[nf] = name; fopt[nf] = trim($2); ftag[nf] = trim($3) }
	else { print "gen_corpus.awk: line " NR ": unknown row kind " kind > "/dev/stderr"; bad = 1 }
}
END {
	if (bad) exit 1
	for (f = 1; f <= nf; f++) {
		t = ftag[f]
		if (only == "ver" && !has(t, "ver")) continue
		rt = runtags(t)
		if (has(t, "any")) {	# placement: Slurm chooses, the named partitions
			p = tagval(t, "part"); gsub(/[^,]+/, "p_&", p)
			emit(fname[f], p, "any", fopt[f], rt)
			continue
		}
		for (p = 1; p <= np; p++) {
			if (has(t, "mem")) {
				if (!keep(pkind[p], pname[p], "", only)) continue
				emit(fname[f] "@" pname[p], "p_" pname[p], "each", fopt[f], rt)
				continue
			}
			for (m = 1; m <= nm; m++) {
				if (!keep(pkind[p], pname[p], mname[m], only)) continue
				emit(fname[f] "@" pname[p] "+" mname[m], "p_" pname[p], "each",
				     fopt[f] " " mopt[m], rt)
			}
		}
	}
	print "# " count " requests" > "/dev/stderr"
}

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernel matrix's checks, run inside the guest by /init with busybox
# only: offcpu (build/offcpu-static), workload (build/tests/workload-static)
# and kernel_waits (tests/kernels/kernel_waits.c) in /bin. Prints "plan N",
# then one "ok - NAME" or "FAIL - NAME: why" per check, then "done".
# Bounds are relative to what the same run measured: under TCG the guest's
# 20 ms sleeps take 20 to 40 ms.
T=/tmp
# Interrupt handlers run in threads of their own on PREEMPT_RT and where
# the kernel was booted with threadirqs (matrix.py boots one kernel so):
# those kernels have one check more, the wakeups from such a thread.
preempt_rt=0
uname -v | grep -q PREEMPT_RT && preempt_rt=1
threaded_irqs=$preempt_rt
grep -qw threadirqs /proc/cmdline && threaded_irqs=1
CHECKS=$((20 + threaded_irqs))
echo "plan $CHECKS"

ok() { echo "ok - $1"; }
fail() { echo "FAIL - $1: $2"; }
# check NAME WHY...: ok when WHY is empty, else FAIL with it.
check() {
	name=$1
	shift
	if [ -z "$*" ]; then ok "$name"; else fail "$name" "$*"; fi
}

# JSON Lines fields with awk: a wait is one line, its top-level fields come
# before its stacks and waker, so the first match of a key is the wait's.
AWKLIB='
function num(s, k,   m) {
	if (!match(s, "\"" k "\":-?[0-9]+")) return -1
	m = substr(s, RSTART, RLENGTH); sub(/^[^:]*:/, "", m); return m + 0
}
function str(s, k,   m) {
	if (!match(s, "\"" k "\":\"[^\"]*\"")) return ""
	m = substr(s, RSTART, RLENGTH); sub(/^[^:]*:"/, "", m); sub(/"$/, "", m); return m
}
function leaf(s,   m) {
	if (!match(s, "\"kernel_stack\":\\[\\{\"addr\":\"[^\"]*\",\"sym\":\"[^\"]*\"")) return ""
	m = substr(s, RSTART, RLENGTH); sub(/.*"sym":"/, "", m); sub(/"$/, "", m); return m
}
function overlap(s, e, a, b) { a = s > a ? s : a; b = e < b ? e : b; return b > a ? b - a : 0 }
'

# A stats value from the json recording FILE's stats line.
json_stat() { awk "$AWKLIB"'/"type":"stats"/ { print num($0, k) }' k="$2" "$1"; }
# A value from --stats on stderr ("  name value").
stderr_stat() { awk '$1 == k { print $2 }' k="$2" "$1"; }
# Every offcpu run is bounded, so that one that hangs is one failure, not a
# guest the host has to kill. watch PID WHAT... waits for PID; one still
# running after 120 s is shown, each of its threads' state, wait channel,
# system call and kernel stack, and ps, on "guest:" lines, and killed: it
# returns 124 as timeout(1) would.
watch() {
	pid=$1
	shift
	left=600
	while [ $left -gt 0 ] && [ -d /proc/$pid ] && ! grep -q '^[^ ]* ([^)]*) Z' /proc/$pid/stat 2>/dev/null; do
		sleep 0.2
		left=$((left - 1))
	done
	if [ $left -eq 0 ]; then
		for task in /proc/$pid/task/*; do
			echo "guest: $* hung: thread ${task##*/}" \
				"state $(cut -d' ' -f3 $task/stat) wchan $(cat $task/wchan)" \
				"syscall $(cat $task/syscall) stack $(tr '\n' ' ' <$task/stack)" >/dev/console
		done
		ps -o pid,stat,args | sed 's/^/guest: ps: /' >/dev/console
		kill -9 $pid
		wait $pid
		return 124
	fi
	wait $pid
}
offcpu() {
	/bin/offcpu "$@" &
	watch $! offcpu "$@"
}
# Lines of FILE that say libbpf or the verifier refused something.
# The notice of a feature this kernel lacks is no load error: checked below.
NEWER_FEATURE="does not trust a global function's task argument"
load_errors() {
	grep -v -F "$NEWER_FEATURE" "$1" |
		grep -i -E 'verifier|libbpf|failed to load|permission denied|invalid argument' | head -3
}

# --- one recording of a command: its waits whole and exact ----------------------------------
cat >$T/cmd.sh <<'EOF'
workload truth /tmp/truth && kernel_waits vfork 3 30
EOF
# -m 1ms and frame pointers: on the rt kernel the workload's spinning
# threads switch out 35,000 times in 3 s at -m 0, more than offcpu's reader
# drains under TCG (24 waits dropped, counted, in ringbuf_full; with
# dwarf's 16 KiB stack copies 249). --call-graph dwarf and -m 0 have their
# own checks below.
offcpu -m 1ms -f json --call-graph fp --stats -o $T/a.json -- sh $T/cmd.sh 2>$T/a.err
rc=$?
check "record a command (--call-graph fp)" \
	"$([ $rc -eq 0 ] || echo "exit $rc: $(head -3 $T/a.err)")$(load_errors $T/a.err)"

# exact NAME CLASS FUNCTION: the thread's off-CPU time inside its timed calls
# within 2% of the workload's own total, less the thread's time on CPU (its
# record's run_ns: under TCG each call runs for a millisecond or more), one
# interruptible wait of CLASS per call, each with FUNCTION in its user stack.
exact() {
	awk "$AWKLIB"'
	FNR == NR {
		if ($1 == name) { tid = $2; count = $3; total = $4 }
		else if ($1 == "call") { n[$2]++; cs[$2, n[$2]] = $3; ce[$2, n[$2]] = $4 }
		next
	}
	/"type":"thread"/ && num($0, "tid") == tid { run = num($0, "run_ns") }
	/"type":"offcpu"/ && num($0, "tid") == tid {
		end = num($0, "ts_ns"); start = end - num($0, "duration_ns"); in_calls = 0
		for (i = 1; i <= n[tid]; i++) in_calls += overlap(start, end, cs[tid, i], ce[tid, i])
		got += in_calls
		if (in_calls == 0 || str($0, "state") != "interruptible") next
		mine++
		recovered = index($0, "\"kernel_stack\":[]") && index($0, "\"user_stack\":[]")
		w = str($0, "wait")
		if (!recovered && w != class && index(w, class ":") != 1) bad = bad " class " w
		if (!recovered && index($0, "\"sym\":\"" fn "\"") == 0) bad = bad " no " fn " in its user stack"
	}
	END {
		if (!tid) { print "no " name " in the truth file"; exit }
		if (got > total + 0.02 * total || got < total - run - 0.02 * total) printf "offcpu %.0f ns, workload %.0f ns, its run time %.0f ns;", got, total, run
		if (mine != count) printf " %d waits, workload blocked %d times;", mine, count
		if (bad != "") print bad
	}' name="$1" class="$2" fn="$3" $T/truth $T/a.json
}
check "sleeps exact" "$(exact sleeper sleep sleeper_thread)"
check "mutex handoff exact" "$(exact mutex_waiter lock:mutex mutex_waiter_thread)"
check "pipe exact" "$(exact pipe_reader pipe pipe_reader_thread)"
# What the mutex waits waited on: the futex call's arguments and the lock's
# owner read at the switch-out, the static variable named from the symbols.
check "mutex wait names its lock and holder" "$(awk "$AWKLIB"'
	/"type":"offcpu"/ && str($0, "comm") == "wl_mutex" && str($0, "wait") == "lock:mutex" {
		n++
		if (index($0, "\"object\":{\"kind\":\"mutex\",\"name\":\"contended\"") &&
		    index($0, "\"comm\":\"wl_holder\"}}"))
			ok++
	}
	END { if (!n) print "no mutex waits"; else if (ok != n) printf "%d of %d mutex waits name contended, held by wl_holder", ok, n }' $T/a.json)"

# --- thread states -----------------------------------------------------------------------------
# The truth threads wait interruptible (above); the vfork parent waits
# uninterruptible (TASK_KILLABLE) for each child's 30 ms sleep.
# Each wait ends after a child's sleep did, inside it: the child's exit woke
# the parent. Not a duration: a parent preempted as it forked (the child
# runs first) blocks only once the child already sleeps. On PREEMPT_RT a
# contended spinlock sleeps too, reported uninterruptible as the kernel's
# own sched_switch does: a lock wait is not a vfork wait, whatever its state.
check "uninterruptible vfork" "$(awk "$AWKLIB"'
	/"type":"offcpu"/ && str($0, "comm") == "kw_vfork" {
		end = num($0, "ts_ns"); start = end - num($0, "duration_ns")
		if (str($0, "state") == "uninterruptible" && index(str($0, "wait"), "lock:") != 1) {
			n++; ds[n] = start; de[n] = end; dw[n] = str($0, "wait")
		} else if (str($0, "state") == "interruptible" && str($0, "wait") == "sleep") {
			child++; ce[child] = end
		}
	}
	END {
		for (i = 1; i <= n; i++) {
			for (j = 1; j <= child; j++) if (ce[j] >= ds[i] && ce[j] <= de[i]) break
			if (j <= child) woken++
			else bad = bad sprintf(" %.1f ms in %s", (de[i] - ds[i]) / 1e6, dw[i])
		}
		if (n != 3 || woken != 3)
			printf "%d uninterruptible waits, %d ended after a child slept, want 3 (not:%s);", n, woken, bad
		if (child != 3) printf " %d sleeps of the vfork children, want 3", child
	}' $T/a.json)"

# --- the kernel leaf ----------------------------------------------------------------------------
check "kernel leaf do_nanosleep" "$(awk "$AWKLIB"'
	FNR == NR { if ($1 == "sleeper") tid = $2; next }
	/"type":"offcpu"/ && num($0, "tid") == tid && str($0, "wait") == "sleep" {
		n++; l = leaf($0); if (l != "do_nanosleep") bad = bad " " l
	}
	END { if (n == 0) print "no sleeps"; else if (bad != "") print "leaves:" bad }' \
	$T/truth $T/a.json)"

# --- health counters ---------------------------------------------------------------------------
check "health counters add up (--stats)" "$(
	started=$(stderr_stat $T/a.err waits_started)
	completed=$(stderr_stat $T/a.err waits_completed)
	recovered=$(stderr_stat $T/a.err switch_in_recovered)
	unseen=$(stderr_stat $T/a.err switch_in_unseen)
	emitted=$(stderr_stat $T/a.err emitted)
	lost=$(stderr_stat $T/a.err user_stack_lost)
	ringbuf_full=$(stderr_stat $T/a.err ringbuf_full)
	table_full=$(stderr_stat $T/a.err table_full)
	not_made=$(stderr_stat $T/a.err slots_not_made)
	waits=$(grep -c '"type":"offcpu"' $T/a.json)
	[ -n "$started" ] || { echo "no --stats on stderr"; exit; }
	[ "$started" -eq $((completed + recovered + unseen)) ] ||
		echo "waits_started $started != completed $completed + recovered $recovered + unseen $unseen;"
	[ "$emitted" -ge $((waits - lost)) ] && [ "$completed" -ge "$emitted" ] ||
		echo "emitted $emitted, completed $completed, $waits waits written, $lost lost;"
	[ "$ringbuf_full" -eq 0 ] && [ "$table_full" -eq 0 ] ||
		echo "dropped: ringbuf_full $ringbuf_full, table_full $table_full of $started;"
	# PREEMPT_RT makes slots at fork and start only: -- COMMAND's threads have them all.
	[ "$not_made" -eq 0 ] || echo "slots_not_made $not_made;"
	[ "$emitted" = "$(json_stat $T/a.json emitted)" ] || echo "--stats and the stats line disagree"
)"

# --- report reads the recording back ------------------------------------------------------------
offcpu report -f json -o $T/b.json $T/a.json 2>$T/b.err
rc=$?
totals() { awk "$AWKLIB"'/"type":"offcpu"/ { n++; ns += num($0, "weight_ns") } END { printf "%d waits %.0f ns", n, ns }' "$1"; }
check "report gives the same totals" "$(
	[ $rc -eq 0 ] || echo "exit $rc: $(head -3 $T/b.err)"
	[ "$(totals $T/a.json)" = "$(totals $T/b.json)" ] ||
		echo "recorded $(totals $T/a.json), report $(totals $T/b.json)"
)"

# --- open waits and snapshot: a thread asleep across both ends ----------------------------------
workload sleep kw_open 1 600000 &
open_pid=$!
workload sleep kw_rep 100000 20 &
rep_pid=$!
sleep 1
offcpu -m 0 -f json -p $open_pid -d 1s -o $T/o.json 2>$T/o.err
rc=$?
check "open at start and stop" "$(awk "$AWKLIB"'
	/"type":"offcpu"/ && num($0, "tid") == pid { n++; o = str($0, "open"); d = num($0, "duration_ns");
		s = str($0, "state") "/" str($0, "wait") }
	/"type":"stats"/ { rec = num($0, "recording_duration_ns") }
	END {
		if (rc != 0) { print "exit " rc; exit }
		if (n != 1) { print n " waits of the sleeper, want 1"; exit }
		if (o != "both") printf "open %s, want both;", o
		if (d < rec) printf " %.0f ns asleep, less than the recording (%.0f ns);", d, rec
		if (s != "interruptible/sleep") printf " %s", s
	}' pid=$open_pid rc=$rc $T/o.json)$(load_errors $T/o.err)"

# Open waits' Python frames and labels need 6.8 (trusted global function
# arguments): on an older kernel offcpu loads without them, said once.
check "a feature newer than the kernel degrades with its notice" "$(awk -v rc=$rc -v k="$(uname -r)" '
	index($0, f) { n++ }
	END {
		split(k, v, "[.-]"); want = v[1] * 100 + v[2] < 608
		if (rc != 0) print "exit " rc
		else if (n != want) printf "%d notices on %s, want %d", n, k, want
		else if (missing != want) printf "kernel_features_missing %d, want %d", missing, want
	}' f="$NEWER_FEATURE" missing="$(json_stat $T/o.json kernel_features_missing)" $T/o.err)"

offcpu snapshot -p $open_pid -f json -o $T/s.json 2>$T/s.err
rc=$?
check "snapshot lists the blocked thread" "$(awk "$AWKLIB"'
	/"type":"offcpu"/ && num($0, "tid") == pid { n++; s = str($0, "state") "/" str($0, "wait") "/" str($0, "open") }
	END {
		if (rc != 0) { print "exit " rc; exit }
		if (n != 1) print n " entries for the sleeper, want 1"
		else if (s != "interruptible/sleep/after") print s
	}' pid=$open_pid rc=$rc $T/s.json)$(load_errors $T/s.err)"

# --- every mode loads (no verifier failure) and records -------------------------------------------
# mode NAME OFFCPU_ARGS...: the 20 ms sleeper kw_rep recorded under them.
mode() {
	name=$1
	shift
	offcpu -m 1ms -f json -o $T/m.json "$@" 2>$T/m.err
	rc=$?
	check "$name" "$(awk "$AWKLIB"'
		/"type":"offcpu"/ && str($0, "comm") == "kw_rep" && str($0, "wait") == "sleep" { n++ }
		/"type":"offcpu"/ && (sel == "pid" && num($0, "pid") != pid || sel == "comm" && str($0, "comm") != "kw_rep") { other++ }
		END {
			if (rc != 0) { print "exit " rc; exit }
			if (n < 3) printf "%d sleeps of kw_rep recorded;", n
			if (other) printf " %d waits of other threads", other
		}' rc=$rc pid=$rep_pid sel="$SELECT" $T/m.json)$(load_errors $T/m.err)"
}
SELECT= mode "--call-graph dwarf" --call-graph dwarf -p $rep_pid -d 1s
SELECT= mode "--wakers" --wakers -p $rep_pid -d 1s
SELECT= mode "--short sample" --short sample -m 5ms -p $rep_pid -d 1s
SELECT=pid mode "-p" -p $rep_pid -d 1s
SELECT=comm mode "-c" -c kw_rep -d 1s
kill $open_pid $rep_pid
wait

# --- -F: the on-CPU sampler, a perf event program, on this kernel --------------------------------
# kw_spin computes for 500 ms of its own CPU time: sampled in spin_until(),
# each sample 1/997 s, every one sent counted. How many there are is the
# host's check: under TCG the clock event's timer fires late, and the
# kernel forwards it past the periods missed (236 samples for 531 ms of
# CPU time in one guest, 1 in 5 of them in the kernel's own work).
offcpu -F 997 -f json --call-graph fp -o $T/f.json -- kernel_waits spin 500 >$T/f.out 2>$T/f.err
rc=$?
check "-F samples a thread on CPU" "$(awk "$AWKLIB"'
	FNR == NR { if ($1 == "spin") cpu_ns = $2 * 1000000; next }
	/"type":"oncpu"/ { all++ }
	/"type":"oncpu"/ && str($0, "comm") == "kw_spin" {
		n++
		if (num($0, "weight_ns") != 1003009) w++
		if (index($0, "\"sym\":\"spin_until\"")) named++
	}
	/"type":"stats"/ { sent = num($0, "oncpu_samples") }
	END {
		if (rc != 0) { print "exit " rc; exit }
		if (!cpu_ns) { print "kernel_waits spin said no CPU time"; exit }
		# At least 30% of the periods it ran: TCG lost up to 56% in one guest.
		if (n * 1003009 > 1.25 * cpu_ns || n * 1003009 < 0.3 * cpu_ns) printf "%d samples of kw_spin (%.0f ms), its CPU time %.0f ms;", n, n * 1.003009, cpu_ns / 1e6
		if (w) printf " %d samples not weighing 1/997 s;", w
		if (named < 0.6 * n) printf " %d of %d samples in spin_until;", named, n
		if (sent != all) printf " oncpu_samples %d, %d records", sent, all
	}' rc=$rc $T/f.out $T/f.json || echo "awk failed")$(load_errors $T/f.err)"

# --- --version -v: what this kernel has, as the checks above found it --------------------------
offcpu --version -v >$T/v.out 2>$T/v.err
rc=$?
check "--version -v lists this kernel" "$(awk -v rc=$rc -v k="$(uname -r)" '
	/^required:/ { part = "r"; next }
	/^optional:/ { part = "o"; next }
	part == "r" && $1 != "yes" { printf "required: %s;", $0 }
	part == "r" { required++ }
	part == "o" && /trusted task arguments/ { trusted = $1 }
	part == "o" && /tracepoint rseq_update/ { rseq = $1 }
	END {
		split(k, v, "[.-]"); want = v[1] * 100 + v[2] >= 608 ? "yes" : "no"
		if (rc != 0) printf " exit %d", rc
		if (required < 10) printf " %d required features listed", required
		if (trusted != want) printf " trusted task arguments: %s on %s, want %s", trusted, k, want
		if (rseq != "yes") printf " rseq_update: %s", rseq
	}' $T/v.out)"

# --- PREEMPT_RT: waiters for a spinlock_t sleep in TASK_RTLOCK_WAIT -------------------------------
# kernel_waits rtlock contends the futex hash bucket's lock; on RT its
# waiters sleep (uninterruptible, lock:rt-spin), elsewhere they spin.
offcpu -m 0 --state uninterruptible -f json -o $T/rt.json -- kernel_waits rtlock 4 1 2>$T/rt.err
rc=$?
rt=$(awk "$AWKLIB"'/"type":"offcpu"/ && str($0, "comm") == "kw_rtlock" && str($0, "wait") == "lock:rt-spin" { n++ }
	END { print n + 0 }' $T/rt.json)
if [ "$preempt_rt" -eq 1 ]; then
	check "rt spinlock waits (PREEMPT_RT)" "$([ $rc -eq 0 ] || echo "exit $rc;")$(
		[ "$rt" -ge 1 ] || echo " no uninterruptible lock:rt-spin wait of the contending threads")"
else
	check "no rt spinlock waits (not PREEMPT_RT)" "$([ $rc -eq 0 ] || echo "exit $rc;")$(
		[ "$rt" -eq 0 ] || echo " $rt lock:rt-spin waits")"
fi
# --- wakeups from an interrupt handler's thread ------------------------------------------------
# The guest's second serial port (ttyS1, to qemu's null device): a writer
# past the 4 KiB the port buffers waits for its transmit interrupt, whose
# handler (serial8250_tx_chars -> uart_write_wakeup) wakes it. Threaded,
# the handler runs in irq/N-ttyS1, the waker the check wants. Unthreaded
# there is nothing to see: qemu's UART is always ready, so the hard
# interrupt drains the buffer inside the writer's own write and it never
# blocks there (on the cloud kernel 6 of its 7 waits were preemptions,
# none in write); the host's tests check hard interrupt wakers. Threaded,
# the writer blocks only when it fills the buffer faster than the thread
# empties it: on the generic kernel 2 of its waits once, 3 or more other
# times; 256 KiB took past the 120 s watchdog on PREEMPT_RT under TCG.
# The first open waits too, for kthreadd to make the handler's thread.
if [ "$threaded_irqs" -eq 1 ]; then
	offcpu -m 0 -f json -o $T/tty.json -- kernel_waits ttywrite /dev/ttyS1 65536 2>$T/tty.err
	rc=$?
	check "wakeups from the serial port's interrupt thread" "$([ $rc -eq 0 ] || echo "exit $rc: $(head -3 $T/tty.err);")$(
		awk "$AWKLIB"'
		/"type":"offcpu"/ && str($0, "comm") == "kw_tty" && match($0, "\"waker\":\\{[^}]*\\}") {
			w = substr($0, RSTART, RLENGTH); n++
			if (str(w, "context") == "hardirq") hard++
			else if (index(str(w, "comm"), "irq/") == 1) thread++
			else other = other " " (str(w, "context") != "" ? str(w, "context") : str(w, "comm"))
		}
		END {
			if (thread < 1 || hard > 0)
				printf "%d waits of the writer woken: %d by an irq thread (want 1 or more), %d in hardirq context (want 0); others:%s",
					n, thread + 0, hard + 0, other
		}' $T/tty.json)$(load_errors $T/tty.err)"
fi

# --- cost: reported on a "guest:" line, not checked (TCG's timing is noise) ----------------------
# fdinfo's run time and count of each BPF program a process holds, summed:
# "NS COUNT", with kernel.bpf_stats_enabled on.
prog_stats() {
	cat /proc/$1/fdinfo/* 2>/dev/null | awk '
		$1 == "run_time_ns:" { ns += $2 } $1 == "run_cnt:" { n += $2 }
		END { printf "%.0f %.0f\n", ns, n }'
}
cost() {
	echo 1 >/proc/sys/kernel/bpf_stats_enabled
	/bin/offcpu -v -m 1ms -f json -o $T/c.json 2>$T/c.err &
	tracer=$!
	left=600
	until grep -q "tracing;" $T/c.err || [ $left -eq 0 ]; do sleep 0.2; left=$((left - 1)); done
	# After offcpu, as make bench attaches it: offcpu still pays for being first.
	empty_switch /empty_switch.bpf.o &
	empty=$!
	# Attached once it has run.
	left=600
	until [ "$(prog_stats $empty | cut -d' ' -f2)" -gt 0 ] || [ $left -eq 0 ]; do
		sleep 0.2
		left=$((left - 1))
	done
	set -- $(prog_stats $tracer) $(prog_stats $empty)
	kernel_waits pingpong 20000 &
	watch $! kernel_waits pingpong
	set -- "$@" $(prog_stats $tracer) $(prog_stats $empty)
	kill -INT $tracer $empty
	watch $tracer offcpu, its cost measured
	watch $empty empty_switch
	echo 0 >/proc/sys/kernel/bpf_stats_enabled
	awk -v clock="$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" \
		-v o0=$1 -v e0=$3 -v n0=$4 -v o1=$5 -v e1=$7 -v n1=$8 'BEGIN {
		n = n1 - n0
		if (n <= 0 || e1 <= e0) { print "guest: cost not measured: no switches counted"; exit }
		printf "guest: cost: offcpu -m 1ms %.0f ns a switch, the empty program %.0f ns: %.1f x empty (%d switches, clock %s)\n",
			(o1 - o0) / n, (e1 - e0) / n, (o1 - o0) / (e1 - e0), n, clock
	}'
}
cost

echo "done"

# SPDX-License-Identifier: GPL-2.0
"""The kernel matrix: Debian 12's own 6.1 kernels, each downloaded with
apt-get download (the newest ABI apt offers for its flavour), unpacked
into build/kernels/ (nothing goes into the host's /boot) and booted under
qemu-system-x86_64 with TCG on build/kernels/initramfs.gz, whose /init runs
tests/kernels/checks.sh and prints "plan N", "ok - NAME" or
"FAIL - NAME: why" per check, and "done" on the serial console.
"""
import glob
import os
import re
import socket
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS_DIR = os.path.join(ROOT, "build", "kernels")
INITRAMFS = os.path.join(KERNELS_DIR, "initramfs.gz")

# The suite's test name -> Debian's flavour of linux-image-6.1.0-ABI-FLAVOUR-unsigned.
FLAVOURS = {
    "debian_6_1": "amd64",
    "debian_6_1_cloud": "cloud-amd64",
    "debian_6_1_rt": "rt-amd64",
}

# Kernel arguments of a test's guest past the console's: the generic kernel
# runs its interrupt handlers in threads (threadirqs), as PREEMPT_RT does by
# itself, so wakeups from a handler's thread are checked both ways.
BOOT_ARGS = {
    "debian_6_1": "threadirqs",
}

# A whole guest: boot (2 to 6 s under TCG here) and 18 or 19 checks, 45 s on a
# quiet machine, 160 s beside three busy loops; each offcpu run is bounded
# by 120 s inside, and shown if it hangs. One that takes longer hung.
GUEST_TIMEOUT_S = 480


class KernelError(Exception):
    """The kernel could not be had: its package, its download, its image."""


def newest_package(flavour):
    """The newest linux-image-6.1.0-N-FLAVOUR-unsigned apt knows of."""
    r = subprocess.run(["apt-cache", "search", "--names-only",
                        r"^linux-image-6\.1\.0-[0-9]+-%s-unsigned$" % re.escape(flavour)],
                       capture_output=True, text=True)
    names = re.findall(r"^(linux-image-6\.1\.0-(\d+)-%s-unsigned) " % re.escape(flavour),
                       r.stdout, re.M)
    if r.returncode != 0 or not names:
        raise KernelError("apt offers no linux-image-6.1.0-*-%s-unsigned (apt-cache: %s)" %
                          (flavour, (r.stderr or "no match").strip()))
    return max(names, key=lambda n: int(n[1]))[0]


def kernel_image(flavour):
    """The vmlinuz of the newest package of flavour, downloaded and unpacked once."""
    package = newest_package(flavour)
    release = package[len("linux-image-"):-len("-unsigned")]
    tree = os.path.join(KERNELS_DIR, release)
    image = os.path.join(tree, "boot", "vmlinuz-" + release)
    if os.path.exists(image):
        return release, image
    debs = os.path.join(KERNELS_DIR, "debs")
    os.makedirs(debs, exist_ok=True)
    r = subprocess.run(["apt-get", "download", package], cwd=debs, capture_output=True,
                       text=True)
    found = glob.glob(os.path.join(debs, package + "_*.deb"))
    if r.returncode != 0 or not found:
        raise KernelError("cannot download %s: %s" % (package, r.stderr.strip()[-300:]))
    r = subprocess.run(["dpkg-deb", "-x", found[0], tree + ".tmp"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise KernelError("cannot unpack %s: %s" % (found[0], r.stderr.strip()))
    os.rename(tree + ".tmp", tree)
    if not os.path.exists(image):
        raise KernelError("%s holds no %s" % (package, image))
    return release, image


def monitor_command(monitor, command, wait_s):
    """What qemu's monitor answers command, read after wait_s seconds."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(monitor)
    time.sleep(0.5)
    s.recv(1 << 16)
    s.sendall(command.encode() + b"\n")
    time.sleep(wait_s)
    out = s.recv(1 << 20).decode("utf-8", "replace")
    s.close()
    return out


# A hung guest's vCPUs, read through qemu's monitor: its registers and
# the words on top of each kernel stack. Debian's System.map is a stub ("The
# real System.map is in the linux-image-<version>-dbg package"), and a guest
# spinning with interrupts off takes no sysrq: a second guest of the same
# kernel (nokaslr: the same addresses) names them from its /proc/kallsyms.
STACK_WORDS = 512
# The kernel image, then the modules' and BPF programs' area (x86-64 with
# RANDOMIZE_BASE, as Debian builds it: KERNEL_IMAGE_SIZE is 1 GiB).
KERNEL_TEXT = (0xffffffff80000000, 0xffffffffff000000)
MODULES_VADDR = 0xffffffffc0000000
# What the kernel command line holds (COMMAND_LINE_SIZE is 2048 on x86).
MAX_SYMBOLIZED = 100


def vcpus(monitor):
    """[(cpu, rip, interrupts on, kernel mode, [kernel text words on its stack])]."""
    out = monitor_command(monitor, "info registers -a", 1)
    found = []
    for cpu, regs in enumerate(re.split(r"\n(?=CPU#\d+)", out)[1:]):
        reg = dict(re.findall(r"\b(RIP|RSP|RFL|CPL)=([0-9a-f]+)", regs))
        if "RIP" not in reg:
            continue
        rip, rsp = int(reg["RIP"], 16), int(reg.get("RSP", "0"), 16)
        interrupts, kernel = bool(int(reg.get("RFL", "0"), 16) & 0x200), reg.get("CPL") == "0"
        words = []
        if kernel:
            dump = monitor_command(monitor, "cpu %d\nx/%dgx 0x%x" % (cpu, STACK_WORDS, rsp), 1)
            words = [int(w, 16) for w in re.findall(r"\b0x([0-9a-f]{16})\b", dump)]
            words = [w for w in words if KERNEL_TEXT[0] <= w < KERNEL_TEXT[1]]
        found.append((cpu, rip, interrupts, kernel, words))
    return found


def symbolize(image, addrs):
    """{address: "function+0xOFF"}, by a guest of image reading its kallsyms."""
    # The first ones (each vCPU's RIP, then the top of its stack) first.
    addrs = sorted(list(dict.fromkeys(addrs))[:MAX_SYMBOLIZED])
    if not addrs:
        return {}
    log = os.path.join(KERNELS_DIR, "symbolize.log")
    cmd = ["qemu-system-x86_64", "-accel", "tcg,thread=single", "-m", "1024", "-nographic",
           "-no-reboot", "-kernel", image, "-initrd", INITRAMFS, "-serial", "file:" + log,
           "-append", "console=ttyS0 panic=-1 quiet nokaslr offcpu_symbolize=" +
           ",".join("%016x" % a for a in addrs)]
    try:
        subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120)
    except subprocess.TimeoutExpired:
        return {}
    with open(log, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    return {int(a, 16): name for a, name in re.findall(r"^sym: ([0-9a-f]+) (\S+)", text, re.M)}


def describe(image, cpus):
    """One line a vCPU of a guest that hung (vcpus()): where it was, whether
    its interrupts were on, and the kernel functions whose addresses were on
    top of its stack (a scan, as the kernel's "?" frames: a stale word shows
    too)."""
    names = symbolize(image, [a for c in cpus for a in [c[1]] + c[4] if a < MODULES_VADDR])
    lines = []
    for cpu, rip, interrupts, kernel, words in cpus:
        if not kernel:
            lines.append("CPU %d in user space at 0x%x" % (cpu, rip))
            continue
        seen = []
        for w in words:
            if w >= MODULES_VADDR:
                name = "[bpf or module 0x%x]" % w
            else:
                name = names.get(w, "0x%x" % w)
            if name != "-" and name not in seen:
                seen.append(name)
        lines.append("CPU %d at %s, interrupts %s; on its stack: %s" %
                     (cpu, names.get(rip, "0x%x" % rip), "on" if interrupts else "off",
                      " ".join(seen) or "nothing in kernel text"))
    return lines


def boot(image, log, args=""):
    """Boots image on the initramfs; returns (serial output, seconds taken,
    where its vCPUs were if it had to be killed)."""
    if not os.path.exists(INITRAMFS):
        raise KernelError("no %s: run 'make test-build'" % INITRAMFS)
    monitor = log + ".monitor"
    if os.path.exists(monitor):
        os.unlink(monitor)
    # With KVM this VM's guests did not boot: TCG, two vCPUs for the
    # checks that move a thread between CPUs. One host thread runs both
    # (thread=single): with a thread each, about one guest in four hung as
    # a BPF link was released. The tracepoint's static call was being
    # patched (text_poke_bp) and CPU 0 waited on CPU 1's IPI forever,
    # while CPU 1 looped in exc_int3 on the patched site in __schedule
    # with interrupts off (the guest's NMI backtraces, soft lockup of 186
    # s): code modified across vCPUs that multi-threaded TCG did not see.
    cmd = ["qemu-system-x86_64", "-accel", "tcg,thread=single", "-smp", "2", "-m", "1024", "-nographic",
           "-no-reboot", "-kernel", image, "-initrd", INITRAMFS,
           "-monitor", "unix:%s,server,nowait" % monitor, "-serial", "file:" + log,
           # ttyS1, whose transmit interrupt wakes a writer (checks.sh).
           "-serial", "null",
           "-append", ("console=ttyS0 panic=-1 quiet loglevel=5 nokaslr " + args).strip()]
    start = time.monotonic()
    hung = None
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        p.wait(timeout=GUEST_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        try:
            cpus = vcpus(monitor)
        except (OSError, ValueError) as e:
            cpus, hung = None, ["(not read: %s)" % e]
        p.kill()
        p.wait()
        if cpus is not None:
            hung = describe(image, cpus)
    with open(log, "rb") as f:
        serial = f.read().decode("utf-8", "replace")
    return serial, time.monotonic() - start, hung


def results(serial):
    """The guest's lines: (planned count or None, [ok names], [FAIL lines], done, guest lines)."""
    plan, oks, fails, done, notes = None, [], [], False, []
    for line in serial.replace("\r", "").splitlines():
        if line.startswith("plan "):
            plan = int(line.split()[1])
        elif line.startswith("ok - "):
            oks.append(line[5:])
        elif line.startswith("FAIL - "):
            fails.append(line)
        elif line == "done":
            done = True
        elif "guest: " in line:
            # The first follows the firmware's terminal escapes on its line.
            notes.append(line[line.index("guest: ") + len("guest: "):])
    return plan, oks, fails, done, notes


def run_kernel(name):
    """Boots the kernel of test name and raises AssertionError with the
    guest's failing lines, or if it never finished its plan."""
    try:
        release, image = kernel_image(FLAVOURS[name])
    except KernelError as e:
        raise AssertionError(str(e))
    log = os.path.join(KERNELS_DIR, "serial-%s.log" % release)
    serial, seconds, hung = boot(image, log, BOOT_ARGS.get(name, ""))
    plan, oks, fails, done, notes = results(serial)
    print("%s: %s, %.0f s in all; %s" % (name, release, seconds, "; ".join(notes)))
    problems = list(fails)
    if plan is None:
        problems.append("the guest never began its checks (%s)" % log)
    elif not done or len(oks) + len(fails) != plan:
        problems.append("the guest ended after %d of %d checks, in %.0f s (%s)" %
                        (len(oks) + len(fails), plan, seconds, log))
    if hung:
        problems.append("killed after %d s:\n    %s" % (GUEST_TIMEOUT_S, "\n    ".join(hung)))
    assert not problems, "%s:\n  %s" % (release, "\n  ".join(problems))

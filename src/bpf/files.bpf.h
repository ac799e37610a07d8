/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The file a wait in a call on one fd waited on (struct offcpu_file): a
 * pipe, a FIFO, a socket and its addresses, an eventfd, an epoll... The
 * switch-out only notes the call (file_call_at_switch_out(), from
 * object_take()); the fd's struct file is read at the switch-in, and only
 * for the waits that passed (fill_record()): the thread has not run since
 * it blocked, so its saved registers still hold the call's arguments and
 * its fd still the file it waited on. A wait that did not pass pays for
 * nothing but the call number object_take() reads anyway.
 */
#ifndef OFFCPU_FILES_BPF_H
#define OFFCPU_FILES_BPF_H

/* x86_64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl): a stable ABI; offcpu.h has
 * those user space names an object by. */
#define NR_READ 0
#define NR_WRITE 1
#define NR_POLL 7
#define NR_PREAD64 17
#define NR_PWRITE64 18
#define NR_READV 19
#define NR_WRITEV 20
#define NR_CONNECT 42
#define NR_ACCEPT 43
#define NR_SENDTO 44
#define NR_RECVFROM 45
#define NR_SENDMSG 46
#define NR_RECVMSG 47
#define NR_FSYNC 74
#define NR_FDATASYNC 75
#define NR_EPOLL_WAIT 232
#define NR_PPOLL 271
#define NR_SPLICE 275
#define NR_EPOLL_PWAIT 281
#define NR_ACCEPT4 288
#define NR_PREADV 295
#define NR_PWRITEV 296
#define NR_RECVMMSG 299
#define NR_SENDMMSG 307
#define NR_PREADV2 327
#define NR_PWRITEV2 328
#define NR_EPOLL_PWAIT2 441

/* fcntl's commands that wait for a lock (include/uapi/asm-generic/fcntl.h). */
#define FILE_F_SETLKW 7
#define FILE_F_OFD_SETLKW 38

/* include/uapi/linux/stat.h, include/uapi/linux/magic.h, include/linux/socket.h */
#define FILE_S_IFMT 00170000
#define FILE_S_IFSOCK 0140000
#define FILE_ANON_INODE_FS_MAGIC 0x09041934
#define FILE_AF_INET 2
#define FILE_AF_INET6 10

/* A call whose first argument is the one fd it may wait on (splice: its input). */
static __always_inline bool file_call_on_fd(__u64 nr)
{
	switch (nr) {
	case NR_READ:
	case NR_WRITE:
	case NR_PREAD64:
	case NR_PWRITE64:
	case NR_READV:
	case NR_WRITEV:
	case NR_PREADV:
	case NR_PWRITEV:
	case NR_PREADV2:
	case NR_PWRITEV2:
	case NR_CONNECT:
	case NR_ACCEPT:
	case NR_ACCEPT4:
	case NR_SENDTO:
	case NR_RECVFROM:
	case NR_SENDMSG:
	case NR_RECVMSG:
	case NR_SENDMMSG:
	case NR_RECVMMSG:
	case OFFCPU_NR_FCNTL:
	case OFFCPU_NR_FLOCK:
	case NR_FSYNC:
	case NR_FDATASYNC:
	case NR_EPOLL_WAIT:
	case NR_EPOLL_PWAIT:
	case NR_EPOLL_PWAIT2:
	case NR_SPLICE:
		return true;
	}
	return false;
}

/*
 * At the switch-out into a sleep (or in the open-wait iterator), from
 * object_take(): whether nr is a call on one fd, noted in o. Its arguments
 * wait for the switch-in, but for poll's: its one struct pollfd is in user
 * memory, readable here alone (task as read_user() takes it): its fd, an
 * int, on one page.
 */
static __always_inline bool file_call_at_switch_out(struct offcpu_object *o, struct pt_regs *regs,
						    __u64 nr, struct task_struct *task)
{
	if (nr == NR_POLL || nr == NR_PPOLL) {
		o->args[0] = BPF_CORE_READ(regs, di);
		o->args[1] = BPF_CORE_READ(regs, si);
		/* Several fds: which one it waits on is not known. */
		if (o->args[1] != 1)
			return false;
		o->taken = 1;
		o->syscall = nr;
		o->window_addr = o->args[0];
		o->window_len = 0;
		if (!read_user(o->window, sizeof(__s32), o->args[0], task))
			o->window_len = sizeof(__s32);
		return true;
	}
	if (!file_call_on_fd(nr))
		return false;
	o->taken = 1;
	o->syscall = nr;
	return true;
}

/* A socket's family, type, protocol, state and both ends. */
static __always_inline void file_take_socket(struct file *file, struct offcpu_file *f)
{
	struct socket *sock = BPF_CORE_READ(file, private_data);
	struct sock *sk;

	if (!sock)
		return;
	f->sock_type = (__u16)BPF_CORE_READ(sock, type);
	sk = BPF_CORE_READ(sock, sk);
	if (!sk)
		return;
	f->sock_family = BPF_CORE_READ(sk, __sk_common.skc_family);
	f->sock_state = BPF_CORE_READ(sk, __sk_common.skc_state);
	f->sock_protocol = BPF_CORE_READ(sk, sk_protocol);
	if (f->sock_family != FILE_AF_INET && f->sock_family != FILE_AF_INET6)
		return;
	f->local_port = BPF_CORE_READ(sk, __sk_common.skc_num);
	f->peer_port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (f->sock_family == FILE_AF_INET) {
		BPF_CORE_READ_INTO((__u32 *)f->local_addr, sk, __sk_common.skc_rcv_saddr);
		BPF_CORE_READ_INTO((__u32 *)f->peer_addr, sk, __sk_common.skc_daddr);
	} else {
		BPF_CORE_READ_INTO((struct in6_addr *)f->local_addr, sk,
				   __sk_common.skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO((struct in6_addr *)f->peer_addr, sk, __sk_common.skc_v6_daddr);
	}
}

/*
 * At t's switch-in, for a wait that passed: the file its call on one fd
 * waited on, into o->file (o is the record's, o->file zero but for this).
 * t has not run since it blocked. The fd table is read as fget() reads it:
 * fdt->fd[fd] for fd below fdt->max_fds. About ten loads, a socket's
 * eight more.
 */
static __always_inline void file_take(struct task_struct *t, __u32 tid, struct offcpu_object *o)
{
	struct offcpu_file *f = &o->file;
	struct super_block *sb;
	struct pt_regs *regs;
	struct fdtable *fdt;
	struct inode *inode;
	struct file **fds;
	struct file *file;
	const unsigned char *dname;
	__u64 nr = o->syscall;
	__s32 fd;

	/* An exiting thread's call is over: what it waits on now is its exit's, not the fd's. */
	if (!o->taken || (t->flags & (PF_KTHREAD | PF_EXITING)))
		return;
	if (nr == NR_POLL || nr == NR_PPOLL) {
		/* struct pollfd's first int, read at the switch-out. */
		if (o->window_addr != o->args[0] || o->window_len < sizeof(fd))
			return;
		fd = *(__s32 *)o->window;
	} else if (file_call_on_fd(nr)) {
		regs = (struct pt_regs *)bpf_task_pt_regs(t);
		o->args[0] = BPF_CORE_READ(regs, di);
		o->args[1] = BPF_CORE_READ(regs, si);
		o->args[2] = BPF_CORE_READ(regs, dx);
		if (nr == OFFCPU_NR_FCNTL && o->args[1] != FILE_F_SETLKW &&
		    o->args[1] != FILE_F_OFD_SETLKW)
			return;
		fd = (__s32)o->args[0];
	} else {
		return;
	}
	if (fd < 0)
		return;
	fdt = BPF_CORE_READ(t, files, fdt);
	if (!fdt || (__u32)fd >= BPF_CORE_READ(fdt, max_fds))
		return;
	fds = BPF_CORE_READ(fdt, fd);
	if (!fds || bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) || !file)
		return;
	inode = BPF_CORE_READ(file, f_inode);
	if (!inode)
		return;
	sb = BPF_CORE_READ(inode, i_sb);
	f->tid = tid;
	f->fd = fd;
	f->ino = BPF_CORE_READ(inode, i_ino);
	f->mode = BPF_CORE_READ(inode, i_mode);
	f->dev = BPF_CORE_READ(sb, s_dev);
	f->magic = BPF_CORE_READ(sb, s_magic);
	if (f->magic == FILE_ANON_INODE_FS_MAGIC) {
		/* Every eventfd and epoll shares one inode: its dentry's name tells what it is. */
		dname = BPF_CORE_READ(file, f_path.dentry, d_name.name);
		bpf_probe_read_kernel_str(f->dname, sizeof(f->dname), dname);
	} else if ((f->mode & FILE_S_IFMT) == FILE_S_IFSOCK) {
		file_take_socket(file, f);
	}
	f->taken = 1;
}

#endif

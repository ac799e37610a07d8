// SPDX-License-Identifier: GPL-2.0
/*
 * A thread blocked forever in std::condition_variable::wait under a chain
 * of static functions, and the main thread in std::thread::join; plain
 * -O2, no frame pointers. With an argument MS, a notifier thread wakes the
 * waiter every MS milliseconds and it waits again at the same call site,
 * so offcpu sees its waits complete. Prints "ready" once the threads are
 * started.
 */
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

static std::mutex mutex;
static std::condition_variable cv;
static bool never;

__attribute__((noipa)) static int wait_ready(int x)
{
	std::unique_lock<std::mutex> lock(mutex);

	while (!never)
		cv.wait(lock);
	return x + 1;
}

__attribute__((noipa)) static int cv_c(int x)
{
	return wait_ready(x) + 1;
}

__attribute__((noipa)) static int cv_b(int x)
{
	return cv_c(x) + 1;
}

__attribute__((noipa)) static int cv_a(int x)
{
	return cv_b(x) + 1;
}

__attribute__((noipa)) static int join_waiter(std::thread &t)
{
	t.join();
	return never; /* read after the call: no tail call */
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		int ms = std::atoi(argv[1]);

		std::thread([ms] {
			pthread_setname_np(pthread_self(), "notifier");
			for (;;) {
				std::this_thread::sleep_for(std::chrono::milliseconds(ms));
				cv.notify_one();
			}
		}).detach();
	}
	std::thread t([] {
		pthread_setname_np(pthread_self(), "condvar");
		cv_a(0);
	});
	std::printf("ready\n");
	std::fflush(stdout);
	return join_waiter(t) ? 1 : 0;
}

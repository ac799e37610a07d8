// SPDX-License-Identifier: GPL-2.0
// A C++ program whose waits happen in a template method in a namespace, so
// that the integration tests can check offcpu demangles what it names:
// `cxx_workload N MS` sleeps N x MS ms in offcpu_test::Waiter<int>::block(),
// through a template function inlined into it (an inline frame in DWARF).
#include <chrono>
#include <cstdlib>
#include <thread>

namespace offcpu_test
{
template <typename T> __attribute__((always_inline)) inline void nap_in(T ms)
{
	std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

template <typename T> class Waiter {
    public:
	explicit Waiter(T ms) : ms_(ms)
	{
	}
	__attribute__((noinline)) void block() const
	{
		nap_in(ms_);
	}

    private:
	T ms_;
};
} // namespace offcpu_test

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? std::atoi(argv[1]) : 5;
	offcpu_test::Waiter<int> waiter(argc > 2 ? std::atoi(argv[2]) : 20);

	for (int i = 0; i < rounds; i++)
		waiter.block();
	return 0;
}

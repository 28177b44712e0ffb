#pragma once
// The one thread of a process that runs collective (MPI-IO) HDF5 work, in submission order.
//
// Why one FIFO thread: HDF5 here is not thread-safe, so every call holds one lock. If two threads
// of a rank could each run a collective read (a training loader prefetching while a validation
// loader reads, or while a reader closes its files), rank A's thread could hold the lock waiting in
// collective X for rank B, while rank B's other thread holds the lock waiting in collective Y for
// rank A: a deadlock. With a single queue, every rank runs its collectives in the order the (SPMD)
// program submitted them, which is the same order on every rank.
//
// Without MPI_THREAD_MULTIPLE there is no thread: work runs inline on the caller, in program order,
// and the data loader does not prefetch.

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace halo3d::impl {

class IoExecutor {
 public:
  // The process's executor; the thread starts on first use if MPI provides MPI_THREAD_MULTIPLE.
  static IoExecutor& instance();
  ~IoExecutor();

  // Runs `work` after everything submitted before it (on the I/O thread, or inline); the future
  // carries its exception.
  std::future<void> submit(std::function<void()> work);
  // submit(work).get().
  void run(std::function<void()> work) { submit(std::move(work)).get(); }
  bool threaded() const { return _threaded; }

 private:
  IoExecutor();
  void loop();

  bool _threaded = false;
  std::mutex _mutex;
  std::condition_variable _wake;
  std::deque<std::packaged_task<void()>> _queue;
  bool _stop = false;
  std::thread _thread;
};

}  // namespace halo3d::impl

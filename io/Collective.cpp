#include "halo3d/io/Collective.hpp"

#include <climits>

#include "halo3d/comm/Communicator.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/io/IoError.hpp"

namespace halo3d {

namespace {

enum ErrorKind : int { kGeneric = 0, kShape = 1, kInput = 2, kIo = 3 };

std::pair<int, std::string> describe(std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const ShapeError& e) {
    return {kShape, e.what()};
  } catch (const InputError& e) {
    return {kInput, e.what()};
  } catch (const IoError& e) {
    return {kIo, e.what()};
  } catch (const std::exception& e) {
    return {kGeneric, e.what()};
  } catch (...) {
    return {kGeneric, "unknown exception"};
  }
}

[[noreturn]] void throwAs(int kind, const std::string& message) {
  switch (kind) {
    case kShape:
      throw ShapeError(message);
    case kInput:
      throw InputError(message);
    case kIo:
      throw IoError(message);
    default:
      throw Error(message);
  }
}

}  // namespace

void agreeOnError(std::exception_ptr local_failure, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int mine = local_failure ? rank : INT_MAX;
  int first = INT_MAX;
  checkMpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "agreeOnError: MPI_Allreduce");
  if (first == INT_MAX) return;
  std::string payload;
  if (rank == first) {
    const auto [kind, message] = describe(local_failure);
    payload = char('0' + kind) + message;
  }
  broadcastBytes(payload, first, comm);
  throwAs(payload[0] - '0', payload.substr(1));
}

std::vector<std::string> allgatherStrings(const std::string& mine, MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  const int len = int(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  checkMpi(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm), "MPI_Allgather");
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[std::size_t(r)] = total;
    total += lens[std::size_t(r)];
  }
  std::string all(std::size_t(total), '\0');
  checkMpi(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(),
                          MPI_CHAR, comm),
           "MPI_Allgatherv");
  std::vector<std::string> out;
  for (int r = 0; r < size; ++r)
    out.push_back(
        all.substr(std::size_t(displs[std::size_t(r)]), std::size_t(lens[std::size_t(r)])));
  return out;
}

void broadcastBytes(std::string& bytes, int root, MPI_Comm comm) {
  unsigned long long len = bytes.size();
  checkMpi(MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, root, comm), "MPI_Bcast");
  bytes.resize(std::size_t(len));
  // MPI counts are int: send large payloads in pieces.
  constexpr std::size_t kPiece = std::size_t(1) << 30;
  for (std::size_t off = 0; off < bytes.size(); off += kPiece) {
    const int n = int(std::min(kPiece, bytes.size() - off));
    checkMpi(MPI_Bcast(bytes.data() + off, n, MPI_CHAR, root, comm), "MPI_Bcast");
  }
}

}  // namespace halo3d

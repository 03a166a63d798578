// Linked when r3fuzz is built without CUDA: the CUDA backends are absent, and say so.
#include <string>

#include "gpu/detail/runner.hpp"

namespace r3::gpu::detail {

Result<std::unique_ptr<Runner>> make_cuda_runner(Backend backend) {
  return Error{"gpu backend " + std::string(to_string(backend)) +
               " needs the CUDA build of r3fuzz (configure with -DR3FUZZ_CUDA=ON, or the 'cuda' preset); "
               "this build has only backend host"};
}

}  // namespace r3::gpu::detail

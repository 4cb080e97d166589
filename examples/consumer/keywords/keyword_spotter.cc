// An app as a monorepo builds it: C++ that links ExecuTorch's native runtime from the same lock
// that lowered its program, finds the .pte through Bazel's C++ runfiles library, and classifies
// one clip of 40 MFCC features by 100 frames.
//
//   bazel run //keywords:keyword_spotter -- [CLIP.f32]
//
// CLIP.f32 holds 4,000 float32 values (features by frames, row-major, little-endian); without
// it the app classifies a fixed synthetic clip. Prints "keyword K (score S)".
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>

#include "tools/cpp/runfiles/runfiles.h"

using bazel::tools::cpp::runfiles::Runfiles;
using executorch::extension::Module;

namespace {

constexpr int kFeatures = 40, kFrames = 100;

std::vector<float> read_clip(const char* path) {
  std::vector<float> clip(kFeatures * kFrames);
  if (path == nullptr) {
    for (size_t i = 0; i < clip.size(); ++i) clip[i] = static_cast<float>(i % 13) / 6.0f - 1.0f;
    return clip;
  }
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(clip.data()), clip.size() * sizeof(float));
  if (in.gcount() != static_cast<std::streamsize>(clip.size() * sizeof(float))) clip.clear();
  return clip;
}

}  // namespace

int main(int argc, char** argv) {
  std::string error;
  std::unique_ptr<Runfiles> runfiles(Runfiles::Create(argv[0], &error));
  if (!runfiles) {
    fprintf(stderr, "keyword_spotter: %s\n", error.c_str());
    return 1;
  }
  // The program's path in the runfiles: <workspace name>/<package>/<file>.
  Module module(runfiles->Rlocation("consumer/keywords/keyword_net_pte.pte"));
  std::vector<float> clip = read_clip(argc > 1 ? argv[1] : nullptr);
  if (clip.empty()) {
    fprintf(stderr, "keyword_spotter: %s does not hold %d float32 values\n", argv[1], kFeatures * kFrames);
    return 1;
  }
  auto input = executorch::extension::from_blob(clip.data(), {1, kFeatures, kFrames});
  auto result = module.forward(input);
  if (!result.ok()) {
    fprintf(stderr, "keyword_spotter: forward failed with error %d\n", static_cast<int>(result.error()));
    return 1;
  }
  const auto& scores = result->at(0).toTensor();
  const float* values = scores.const_data_ptr<float>();
  int best = 0;
  for (int k = 1; k < scores.size(1); ++k) best = values[k] > values[best] ? k : best;
  printf("keyword %d (score %.4f)\n", best, values[best]);
  return 0;
}

// run_package: runs an AOTInductor package (export_model.py writes one) from C++, on inputs
// saved with torch.save, and writes its outputs for torch.load to read.
//   run_package PACKAGE INPUTS OUTPUTS [cpu|cuda]
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/serialize.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::vector<char> read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  TORCH_CHECK(file, "run_package: cannot read '", path, "'");
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream file(path, std::ios::binary);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  TORCH_CHECK(file, "run_package: cannot write '", path, "'");
}

// Whether vecadd's operators are registered in this process (linked through vecadd::ops).
bool vecadd_registered() {
  return c10::Dispatcher::singleton().findSchema({"vecadd::add", ""}).has_value();
}

int run(const std::string& package, const std::string& inputs_path, const std::string& outputs_path,
        const std::string& device) {
  const c10::IValue saved = torch::pickle_load(read_file(inputs_path));
  std::vector<at::Tensor> inputs;
  for (const c10::IValue& value : saved.toListRef()) {
    inputs.push_back(value.toTensor().to(device));
  }
  torch::inductor::AOTIModelPackageLoader loader(package);
  std::vector<c10::IValue> outputs;
  for (const at::Tensor& output : loader.run(inputs)) {
    outputs.emplace_back(output.cpu());
  }
  // A tuple pickles with no type tags, which torch.load's weights_only mode accepts.
  write_file(outputs_path, torch::pickle_save(c10::ivalue::Tuple::create(std::move(outputs))));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: run_package PACKAGE INPUTS OUTPUTS [cpu|cuda]\n";
    return 2;
  }
  try {
    return run(argv[1], argv[2], argv[3], argc == 5 ? argv[4] : "cpu");
  } catch (const std::exception& error) {
    const std::string what = error.what();
    if (what.find("vecadd") != std::string::npos && !vecadd_registered()) {
      std::cerr << "run_package: the package calls vecadd's operators, but none are registered "
                   "in this program: link vecadd's CMake target vecadd::ops "
                   "(find_package(vecadd CONFIG REQUIRED COMPONENTS ops), then "
                   "target_link_libraries(run_package PRIVATE vecadd::ops)), which loads "
                   "libvecadd_stable_schemas.so, libvecadd_stable_ops.so and, for CUDA, "
                   "cudaN/libvecadd_stable_ops_cuda.so from vecadd's lib/ folder "
                   "(python -m vecadd --cmakedir names the folder beside it)\n";
    }
    std::cerr << "run_package: " << what.substr(0, what.find('\n')) << "\n";
    return 1;
  }
}

#include "fuzz/implementations/implementation_name.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

constexpr std::string_view kFaults =
    "replay-per-rank, replay-dp-under-ep, tp-major-order, unpadded-offset, no-trim, floor-sp, skip-tp-gather, "
    "last-shard-pad, layer-unchecked, narrow-int16, off-by-one-copy, chunk-row0, window-request-bucket, "
    "no-attn-tp-gather, no-attn-tp-align, tbo-row0, alltoall-floor-first, mc2-own-count";

TEST(ImplementationName, ImplAloneOrImplPlusOneFault) {
  EXPECT_EQ(*parse_implementation_name("r3-fixed"), (ImplementationName{"r3-fixed", Fault::none}));
  EXPECT_EQ(*parse_implementation_name("r3-fixed+no-trim"), (ImplementationName{"r3-fixed", Fault::no_trim}));
  EXPECT_EQ(*parse_implementation_name("gpu+no-trim"), (ImplementationName{"gpu", Fault::no_trim}));
  EXPECT_EQ(*parse_implementation_name("gpu:r3-fixed+chunk-row0"), (ImplementationName{"gpu:r3-fixed", Fault::chunk_row0}));
  // The registry, not the grammar, knows which names exist.
  EXPECT_EQ(*parse_implementation_name("nope"), (ImplementationName{"nope", Fault::none}));
}

TEST(ImplementationName, TextSpellsTheNameBack) {
  for (const char* spec : {"vllm-50874", "r3-fixed+floor-sp", "gpu+narrow-int16", "gpu:vllm-pre-50874+no-trim"})
    EXPECT_EQ(parse_implementation_name(spec)->text(), spec);
}

TEST(ImplementationName, AnExternalCommandIsTakenWhole) {
  // A command line may hold '+'; external programs carry no fault.
  EXPECT_EQ(*parse_implementation_name("external:python3 a+b.py"),
            (ImplementationName{"external:python3 a+b.py", Fault::none}));
  EXPECT_EQ(*parse_implementation_name("external:x+no-trim"), (ImplementationName{"external:x+no-trim", Fault::none}));
}

TEST(ImplementationName, BadNamesSayWhatIsWrong) {
  EXPECT_EQ(parse_implementation_name("gpu+").error().message, "--impl gpu+: no fault after the '+' (IMPL+FAULT)");
  EXPECT_EQ(parse_implementation_name("+no-trim").error().message,
            "--impl +no-trim: no implementation before the '+' (IMPL+FAULT)");
  EXPECT_EQ(parse_implementation_name("r3-fixed+nope").error().message,
            "--impl r3-fixed+nope: fault: \"nope\" is not one of " + std::string(kFaults));
  EXPECT_EQ(parse_implementation_name("r3-fixed+no-trim+no-trim").error().message,
            "--impl r3-fixed+no-trim+no-trim: one fault at most, and \"no-trim+no-trim\" names more (IMPL+FAULT)");
  EXPECT_EQ(parse_implementation_name("r3-fixed+none").error().message,
            "--impl r3-fixed+none: fault: \"none\" is not one of " + std::string(kFaults));
}

TEST(ImplementationName, TheRetiredFaultSpellingIsRefusedWithTheNewOne) {
  EXPECT_EQ(parse_implementation_name("gpu+fault:no-trim").error().message,
            "--impl gpu+fault:no-trim: \"+fault:NAME\" is no longer accepted; write gpu+no-trim");
  EXPECT_EQ(parse_implementation_name("gpu:r3-fixed+fault:floor-sp").error().message,
            "--impl gpu:r3-fixed+fault:floor-sp: \"+fault:NAME\" is no longer accepted; write gpu:r3-fixed+floor-sp");
}

TEST(ImplementationName, FaultFlagFaultsANameWithoutOne) {
  EXPECT_EQ(*with_fault_flag({"gpu", Fault::none}, "no-trim"), (ImplementationName{"gpu", Fault::no_trim}));
  EXPECT_EQ(*with_fault_flag({"gpu", Fault::floor_sp}, ""), (ImplementationName{"gpu", Fault::floor_sp}));
  EXPECT_EQ(with_fault_flag({"gpu", Fault::floor_sp}, "no-trim").error().message,
            "--impl gpu+floor-sp: names a fault already, and --fault gives no-trim");
  EXPECT_EQ(with_fault_flag({"gpu", Fault::none}, "nope").error().message,
            "--fault: fault: \"nope\" is not one of " + std::string(kFaults));
}

}  // namespace
}  // namespace r3

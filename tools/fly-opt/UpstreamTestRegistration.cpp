//===- UpstreamTestRegistration.cpp - mlir-opt's test passes and dialects -===//
//
// What stock mlir-opt registers besides registerAllPasses/registerAllDialects:
// upstream's test passes and test dialects, so that fly-opt accepts every
// pipeline mlir-opt accepts (upstream's GPU integration tests use
// -test-transform-dialect-erase-schedule, -test-vector-warp-distribute,
// -test-lower-to-llvm).
//
// The list mirrors registerTestPasses() and the test dialect registration in
// main() of mlir/tools/mlir-opt/mlir-opt.cpp (LLVM 22), in the same order, so
// the two read side by side. Differences, deliberately:
// - No #ifdef: Debian's LLVM 22 ships every archive the list needs
//   (/usr/lib/llvm-22/lib/libMLIRTest*.a, lib*TestPasses.a, built with
//   MLIR_INCLUDE_TESTS and MLIR_ENABLE_PDL_IN_PATTERNMATCH), so the PDL entries
//   are unconditional.
// - Upstream's repeated calls (registerTestComposeSubView,
//   registerTestMultiBuffering, registerTestIRVisitorsPass) appear once.
// - Absent: none of LLVM 22's entries; every one is in a shipped archive.
//   (Upstream's main after 22 adds registerTestAnalysisTransformDialect-
//   Extension, which no LLVM 22 archive defines, and drops
//   registerSliceAnalysisTestPass, which 22 still registers.)
// test/Tools/fly-opt-dropin.test holds fly-opt to stock mlir-opt's pass and
// dialect lists, so an entry missing here fails there.
//
// The archives are linked next to the MLIR dylib (tools/fly-opt/CMakeLists.txt
// says which): they reference MLIR through it, so there is one pass and
// dialect registry. Not mlir-opt's: MLIRTestToLLVMIRTranslation and
// MLIRTestFromLLVMIRTranslation (mlir-translate's), which link static MLIRIR.
//
//===----------------------------------------------------------------------===//

#include "UpstreamTestRegistration.h"

#include "mlir/IR/DialectRegistry.h"

// Defined in upstream's test libraries, which have no public header.
namespace mlir {
void registerCloneTestPasses();
void registerConvertToTargetEnvPass();
void registerLazyLoadingTestPasses();
void registerLoopLikeInterfaceTestPasses();
void registerPassManagerTestPass();
void registerPrintSpirvAvailabilityPass();
void registerRegionTestPasses();
void registerPrintTosaAvailabilityPass();
void registerShapeFunctionTestPasses();
void registerSideEffectTestPasses();
void registerSliceAnalysisTestPass();
void registerSymbolTestPasses();
void registerTestAffineAccessAnalysisPass();
void registerTestAffineDataCopyPass();
void registerTestAffineLoopUnswitchingPass();
void registerTestAffineReifyValueBoundsPass();
void registerTestAffineWalk();
void registerTestBytecodeRoundtripPasses();
void registerTestDecomposeAffineOpPass();
void registerTestFunc();
void registerTestGpuLoweringPasses();
void registerTestGpuMemoryPromotionPass();
void registerTestLoopPermutationPass();
void registerTestMatchers();
void registerTestOperationEqualPass();
void registerTestPreserveUseListOrders();
void registerTestPrintDefUsePass();
void registerTestPrintInvalidPass();
void registerTestPrintNestingPass();
void registerTestReducer();
void registerTestSpirvEntryPointABIPass();
void registerTestSpirvModuleCombinerPass();
void registerTestTraitsPass();
void registerTosaTestQuantUtilAPIPass();
void registerVectorizerTestPass();

namespace test {
void registerCommutativityUtils();
void registerConvertCallOpPass();
void registerConvertFuncOpPass();
void registerInliner();
void registerInlinerCallback();
void registerMemRefBoundCheck();
void registerPatternsTestPass();
void registerSimpleParametricTilingPass();
void registerTestAffineLoopParametricTilingPass();
void registerTestAliasAnalysisPass();
void registerTestArithEmulateWideIntPass();
void registerTestBuiltinAttributeInterfaces();
void registerTestBuiltinDistinctAttributes();
void registerTestCallGraphPass();
void registerTestCfAssertPass();
void registerTestCFGLoopInfoPass();
void registerTestComposeSubView();
void registerTestCompositePass();
void registerTestControlFlowSink();
void registerTestConvertToSPIRVPass();
void registerTestDataLayoutPropagation();
void registerTestDataLayoutQuery();
void registerTestDeadCodeAnalysisPass();
void registerTestDecomposeCallGraphTypes();
void registerTestDiagnosticsPass();
void registerTestDiagnosticsMetadataPass();
void registerTestDominancePass();
void registerTestDynamicPipelinePass();
void registerTestRemarkPass();
void registerTestEmulateNarrowTypePass();
void registerTestFooAnalysisPass();
void registerTestMultiBuffering();
void registerTestIRVisitorsPass();
void registerTestGenericIRVisitorsPass();
void registerTestInterfaces();
void registerTestIrdlTestDialectConversionPass();
void registerTestLastModifiedPass();
void registerTestLinalgDecomposeOps();
void registerTestLinalgDropUnitDims();
void registerTestLinalgElementwiseFusion();
void registerTestLinalgGreedyFusion();
void registerTestLinalgRankReduceContractionOps();
void registerTestLinalgTransforms();
void registerTestLivenessAnalysisPass();
void registerTestLivenessPass();
void registerTestLLVMLegalizePatternsPass();
void registerTestLoopFusion();
void registerTestLoopMappingPass();
void registerTestLoopUnrollingPass();
void registerTestLowerToArmSME();
void registerTestLowerToLLVM();
void registerTestMakeIsolatedFromAbovePass();
void registerTestMatchReductionPass();
void registerTestMathAlgebraicSimplificationPass();
void registerTestMathPolynomialApproximationPass();
void registerTestMathToVCIXPass();
void registerTestMemRefDependenceCheck();
void registerTestMemRefStrideCalculation();
void registerTestMemRefToLLVMWithTransforms();
void registerTestReshardingPartitionPass();
void registerTestShardSimplificationsPass();
void registerTestNextAccessPass();
void registerTestNVGPULowerings();
void registerTestOpenACC();
void registerTestOneShotModuleBufferizePass();
void registerTestOpaqueLoc();
void registerTestOpLoweringPasses();
void registerTestPadFusion();
void registerTestParallelLoopUnrollingPass();
void registerTestRecursiveTypesPass();
void registerTestSCFUpliftWhileToFor();
void registerTestSCFUtilsPass();
void registerTestSCFWhileOpBuilderPass();
void registerTestSCFWrapInZeroTripCheckPasses();
void registerTestShapeMappingPass();
void registerTestSingleFold();
void registerTestSliceAnalysisPass();
void registerTestSPIRVCPURunnerPipeline();
void registerTestSPIRVFuncSignatureConversion();
void registerTestSPIRVVectorUnrolling();
void registerTestStridedMetadataRangeAnalysisPass();
void registerTestTensorCopyInsertionPass();
void registerTestTensorLikeAndBufferLikePass();
void registerTestTensorTransforms();
void registerTestTopologicalSortAnalysisPass();
void registerTestTransformDialectEraseSchedulePass();
void registerTestPassStateExtensionCommunication();
void registerTestVectorLowerings();
void registerTestVectorReductionToSPIRVDotProd();
void registerTestVulkanRunnerPipeline();
void registerTestWrittenToPass();
void registerTestXeGPULowerings();
void registerTestDialectConversionPasses();
void registerTestPDLByteCodePass();
void registerTestPDLLPasses();
} // namespace test
} // namespace mlir

namespace test {
void registerTestDialect(mlir::DialectRegistry &);
void registerTestDynDialect(mlir::DialectRegistry &);
void registerTestTilingInterfaceTransformDialectExtension(
    mlir::DialectRegistry &);
void registerTestTransformDialectExtension(mlir::DialectRegistry &);
void registerIrdlTestDialect(mlir::DialectRegistry &);
void registerTestTransformsTransformDialectExtension(mlir::DialectRegistry &);
} // namespace test

void fly::registerUpstreamTestPasses() {
  mlir::registerCloneTestPasses();
  mlir::registerConvertToTargetEnvPass();
  mlir::registerPrintTosaAvailabilityPass();
  mlir::registerLazyLoadingTestPasses();
  mlir::registerLoopLikeInterfaceTestPasses();
  mlir::registerPassManagerTestPass();
  mlir::registerPrintSpirvAvailabilityPass();
  mlir::registerRegionTestPasses();
  mlir::registerShapeFunctionTestPasses();
  mlir::registerSideEffectTestPasses();
  mlir::registerSliceAnalysisTestPass();
  mlir::registerSymbolTestPasses();
  mlir::registerTestAffineAccessAnalysisPass();
  mlir::registerTestAffineDataCopyPass();
  mlir::registerTestAffineLoopUnswitchingPass();
  mlir::registerTestAffineReifyValueBoundsPass();
  mlir::registerTestAffineWalk();
  mlir::registerTestBytecodeRoundtripPasses();
  mlir::registerTestDecomposeAffineOpPass();
  mlir::registerTestFunc();
  mlir::registerTestGpuLoweringPasses();
  mlir::registerTestGpuMemoryPromotionPass();
  mlir::registerTestLoopPermutationPass();
  mlir::registerTestMatchers();
  mlir::registerTestOperationEqualPass();
  mlir::registerTestPreserveUseListOrders();
  mlir::registerTestPrintDefUsePass();
  mlir::registerTestPrintInvalidPass();
  mlir::registerTestPrintNestingPass();
  mlir::registerTestReducer();
  mlir::registerTestSpirvEntryPointABIPass();
  mlir::registerTestSpirvModuleCombinerPass();
  mlir::registerTestTraitsPass();
  mlir::registerTosaTestQuantUtilAPIPass();
  mlir::registerVectorizerTestPass();

  mlir::test::registerCommutativityUtils();
  mlir::test::registerConvertCallOpPass();
  mlir::test::registerConvertFuncOpPass();
  mlir::test::registerInliner();
  mlir::test::registerInlinerCallback();
  mlir::test::registerMemRefBoundCheck();
  mlir::test::registerPatternsTestPass();
  mlir::test::registerSimpleParametricTilingPass();
  mlir::test::registerTestAffineLoopParametricTilingPass();
  mlir::test::registerTestAliasAnalysisPass();
  mlir::test::registerTestArithEmulateWideIntPass();
  mlir::test::registerTestBuiltinAttributeInterfaces();
  mlir::test::registerTestBuiltinDistinctAttributes();
  mlir::test::registerTestCallGraphPass();
  mlir::test::registerTestCfAssertPass();
  mlir::test::registerTestCFGLoopInfoPass();
  mlir::test::registerTestComposeSubView();
  mlir::test::registerTestCompositePass();
  mlir::test::registerTestControlFlowSink();
  mlir::test::registerTestConvertToSPIRVPass();
  mlir::test::registerTestDataLayoutPropagation();
  mlir::test::registerTestDataLayoutQuery();
  mlir::test::registerTestDeadCodeAnalysisPass();
  mlir::test::registerTestDecomposeCallGraphTypes();
  mlir::test::registerTestDiagnosticsPass();
  mlir::test::registerTestDiagnosticsMetadataPass();
  mlir::test::registerTestDominancePass();
  mlir::test::registerTestDynamicPipelinePass();
  mlir::test::registerTestRemarkPass();
  mlir::test::registerTestEmulateNarrowTypePass();
  mlir::test::registerTestFooAnalysisPass();
  mlir::test::registerTestMultiBuffering();
  mlir::test::registerTestIRVisitorsPass();
  mlir::test::registerTestGenericIRVisitorsPass();
  mlir::test::registerTestInterfaces();
  mlir::test::registerTestIrdlTestDialectConversionPass();
  mlir::test::registerTestLastModifiedPass();
  mlir::test::registerTestLinalgDecomposeOps();
  mlir::test::registerTestLinalgDropUnitDims();
  mlir::test::registerTestLinalgElementwiseFusion();
  mlir::test::registerTestLinalgGreedyFusion();
  mlir::test::registerTestLinalgRankReduceContractionOps();
  mlir::test::registerTestLinalgTransforms();
  mlir::test::registerTestLivenessAnalysisPass();
  mlir::test::registerTestLivenessPass();
  mlir::test::registerTestLLVMLegalizePatternsPass();
  mlir::test::registerTestLoopFusion();
  mlir::test::registerTestLoopMappingPass();
  mlir::test::registerTestLoopUnrollingPass();
  mlir::test::registerTestLowerToArmSME();
  mlir::test::registerTestLowerToLLVM();
  mlir::test::registerTestMakeIsolatedFromAbovePass();
  mlir::test::registerTestMatchReductionPass();
  mlir::test::registerTestMathAlgebraicSimplificationPass();
  mlir::test::registerTestMathPolynomialApproximationPass();
  mlir::test::registerTestMathToVCIXPass();
  mlir::test::registerTestMemRefDependenceCheck();
  mlir::test::registerTestMemRefStrideCalculation();
  mlir::test::registerTestMemRefToLLVMWithTransforms();
  mlir::test::registerTestReshardingPartitionPass();
  mlir::test::registerTestShardSimplificationsPass();
  mlir::test::registerTestNextAccessPass();
  mlir::test::registerTestNVGPULowerings();
  mlir::test::registerTestOpenACC();
  mlir::test::registerTestOneShotModuleBufferizePass();
  mlir::test::registerTestOpaqueLoc();
  mlir::test::registerTestOpLoweringPasses();
  mlir::test::registerTestPadFusion();
  mlir::test::registerTestParallelLoopUnrollingPass();
  mlir::test::registerTestRecursiveTypesPass();
  mlir::test::registerTestSCFUpliftWhileToFor();
  mlir::test::registerTestSCFUtilsPass();
  mlir::test::registerTestSCFWhileOpBuilderPass();
  mlir::test::registerTestSCFWrapInZeroTripCheckPasses();
  mlir::test::registerTestShapeMappingPass();
  mlir::test::registerTestSingleFold();
  mlir::test::registerTestSliceAnalysisPass();
  mlir::test::registerTestSPIRVCPURunnerPipeline();
  mlir::test::registerTestSPIRVFuncSignatureConversion();
  mlir::test::registerTestSPIRVVectorUnrolling();
  mlir::test::registerTestStridedMetadataRangeAnalysisPass();
  mlir::test::registerTestTensorCopyInsertionPass();
  mlir::test::registerTestTensorLikeAndBufferLikePass();
  mlir::test::registerTestTensorTransforms();
  mlir::test::registerTestTopologicalSortAnalysisPass();
  mlir::test::registerTestTransformDialectEraseSchedulePass();
  mlir::test::registerTestPassStateExtensionCommunication();
  mlir::test::registerTestVectorLowerings();
  mlir::test::registerTestVectorReductionToSPIRVDotProd();
  mlir::test::registerTestVulkanRunnerPipeline();
  mlir::test::registerTestWrittenToPass();
  mlir::test::registerTestXeGPULowerings();
  mlir::test::registerTestDialectConversionPasses();
  mlir::test::registerTestPDLByteCodePass();
  mlir::test::registerTestPDLLPasses();
}

void fly::registerUpstreamTestDialects(mlir::DialectRegistry &registry) {
  ::test::registerIrdlTestDialect(registry);
  ::test::registerTestDialect(registry);
  ::test::registerTestDynDialect(registry);
  ::test::registerTestTilingInterfaceTransformDialectExtension(registry);
  ::test::registerTestTransformDialectExtension(registry);
  ::test::registerTestTransformsTransformDialectExtension(registry);
}

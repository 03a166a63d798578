"""The names an engine's capture module looks up at call time. In the engine they come from vLLM;
here they are None until a test or adapter sets them on the sample module (each sample imports
them from here, so each module has its own names to replace)."""
try:  # the engine's environment
    from vllm.distributed.parallel_state import get_tp_group
    from vllm.forward_context import get_forward_context
except ImportError:
    get_tp_group = get_forward_context = None

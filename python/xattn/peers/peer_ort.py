"""ONNX Runtime's Attention operator (opset 23) on the CPU execution provider,
used the way a user would.

One single-node model per kind of call, built with onnx.helper; per request
of the batch one session.run(). With a prefix, the prefix keys and values go
in as past_key/past_value and the extend's as K/V with is_causal=1: that is
bottom-right aligned (see README.md). Without a prefix, is_causal=1 on the
full K/V. Windows and trees get an explicit boolean attn_mask over the whole
key range (no past); bidirectional and cross get no mask; logit caps use the
operator's softcap attribute. GQA from the head counts of the 4-D inputs.
Sinks have no Attention form. A dtype the CPU provider cannot run (bf16 in
onnxruntime 1.32: NOT_IMPLEMENTED when the session is built) is reported as
Unsupported with onnxruntime's own message.
"""
import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from .. import suites as wl

ONNX_DTYPES = {"f32": TensorProto.FLOAT, "bf16": TensorProto.BFLOAT16, "f16": TensorProto.FLOAT16}
NP_DTYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16}
OPSET = 23
# The CPU kernel materializes the [H_Q, E, S] f32 score matrix of a call
# (measured: E = S = 4096, H_Q = 32 peaks at 2.6 GB RSS); calls above this
# are refused rather than swapping a shared machine. run_peers --ort-max-scores-gib.
MAX_SCORE_BYTES = 4 << 30


class Unsupported(Exception):
    pass


def versions():
    return {"onnxruntime": ort.__version__, "onnx": onnx.__version__, "onnx_opset": OPSET}


def build_model(dtype, past, mask, causal, softcap, scale):
    """Serialized model: Attention(Q, K, V[, attn_mask][, past_key, past_value])."""
    t = ONNX_DTYPES[dtype]
    vi = helper.make_tensor_value_info
    inputs = [vi("Q", t, ["b", "hq", "l", "d"]), vi("K", t, ["b", "hk", "e", "d"]),
              vi("V", t, ["b", "hk", "e", "dv"])]
    names = ["Q", "K", "V"]
    if mask:
        inputs.append(vi("M", TensorProto.BOOL, ["l", "s"]))
    names.append("M" if mask else "")
    outputs = [vi("Y", t, ["b", "hq", "l", "dv"])]
    if past:
        inputs += [vi("PK", t, ["b", "hk", "p", "d"]), vi("PV", t, ["b", "hk", "p", "dv"])]
        names += ["PK", "PV"]
        outputs += [vi("present_key", t, ["b", "hk", "s", "d"]), vi("present_value", t, ["b", "hk", "s", "dv"])]
    attrs = {"is_causal": int(causal), "scale": float(scale)}
    if softcap > 0:
        attrs["softcap"] = float(softcap)
    node = helper.make_node("Attention", names, [o.name for o in outputs], **attrs)
    graph = helper.make_graph([node], "attention", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    return model.SerializeToString()


def session(model, threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    try:
        return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    except Exception as exc:  # ORT raises its own Fail/NotImplemented types
        raise Unsupported(f"onnxruntime {ort.__version__} CPU: {str(exc).splitlines()[0][:200]}")


def plan_call(w, b, how):
    """(past, mask, causal) for request b. how: 'auto' (what a user picks),
    'no_past' (is_causal=1 on the full K/V whatever the prefix), 'past'
    (prefix as past_key/past_value, is_causal=1), 'explicit' (boolean mask)."""
    p = w["requests"][b][0]
    if how == "no_past":
        return False, False, True
    if how == "past":
        return True, False, True
    if how == "explicit":
        return False, True, False
    plain = w["window"] == [-1, -1] and w["mode"] != "tree"
    if plain and w["mode"] in ("bidirectional", "cross"):
        return False, False, False
    if plain and w["mode"] == "causal" and w["align"] == "bottom_right":
        return p > 0, False, True
    if plain and w["mode"] == "causal" and p == 0:
        return False, False, True
    return False, True, False


def prepare(w, dtype, threads, arrays, how="auto"):
    """Returns run: run() computes the whole batch and returns one output
    [1, H_Q, E_b, DV] per request with E_b > 0. arrays(b) gives request b's f32
    (q, k, v) (workloads.request_arrays layout). Raises Unsupported."""
    if w["sinks"]:
        raise Unsupported("ONNX Attention has no attention sinks")
    worst = max((w["heads_q"] * r[1] * wl.key_count(w, r) * 4 for r in w["requests"]), default=0)
    if worst > MAX_SCORE_BYTES:
        raise Unsupported(f"one call would materialize a {worst / 2**30:.1f} GiB score matrix "
                          f"(limit {MAX_SCORE_BYTES / 2**30:.1f} GiB, --ort-max-scores-gib)")
    sessions = {}
    calls = []
    for b, req in enumerate(w["requests"]):
        p, e, _ = req
        if e == 0:
            continue
        past, mask, causal = plan_call(w, b, how)
        key = (past, mask, causal)
        if key not in sessions:
            sessions[key] = session(build_model(dtype, past, mask, causal, w["logit_cap"], wl.scale_of(w)),
                                    threads)
        q, k, v = (np.ascontiguousarray(a.astype(NP_DTYPES[dtype])) for a in arrays(b))
        feeds = {"Q": q}
        if past:
            feeds.update(K=np.ascontiguousarray(k[:, :, p:]), V=np.ascontiguousarray(v[:, :, p:]),
                         PK=np.ascontiguousarray(k[:, :, :p]), PV=np.ascontiguousarray(v[:, :, :p]))
        else:
            feeds.update(K=k, V=v)
        if mask:
            feeds["M"] = wl.visible_mask(w, b)
        calls.append((sessions[key], feeds))
    out = [None] * len(calls)

    def run():
        for n, (sess, feeds) in enumerate(calls):
            out[n] = sess.run(["Y"], feeds)[0]
        return out

    # what --flush-caches flushes before a timed call (the feeds; ORT allocates the outputs)
    run.buffers = [x for _, feeds in calls for x in feeds.values()]
    return run

"""PyTorch and ONNX Runtime peers timed like xattn-bench (`xattn peers`; bench/peers/README.md)."""

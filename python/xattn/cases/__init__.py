"""Case folders (docs/formats.md): `xattn make-case` writes one, `xattn oracle` checks an answer
with an independent numpy implementation."""

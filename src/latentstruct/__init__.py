"""latentstruct: discriminative learning over constrained latent structures."""

__version__ = "0.1.0"

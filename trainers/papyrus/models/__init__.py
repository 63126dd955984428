"""Text models for the Papyrus tasks behind one interface: `fit`, `predict`, `save`, `load_model`.

| kind       | module             | needs                                   | saved state                      |
|------------|--------------------|-----------------------------------------|----------------------------------|
| `tfidf`    | `tfidf.py`         | scikit-learn (the CI baseline)          | JSON vocabulary + `.npy` arrays  |
| `charcnn`  | `charcnn.py`       | torch, safetensors                      | `weights.safetensors`            |
| `bytes`    | `bytes_encoder.py` | torch, safetensors (+ transformers)     | `weights.safetensors` (+ config) |
| `fasttext` | `fasttext_model.py`| fasttext (`pip install fasttext-community`) | fastText's binary `.bin`         |

Heavy packages are imported only when a model of that kind is built or loaded. No saved file is a pickle, and
loading checks every field of `model.json` (see `base.py`).
"""

from synth.trainers.papyrus.models.base import MODEL_KINDS, TextModel, build_model, load_model

__all__ = ["MODEL_KINDS", "TextModel", "build_model", "load_model"]

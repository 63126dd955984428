"""Text models for the Papyrus tasks behind one interface: `fit`, `predict`, `save`, `load_model`.

| kind       | module             | needs                                   |
|------------|--------------------|-----------------------------------------|
| `tfidf`    | `tfidf.py`         | scikit-learn (the CI baseline)          |
| `charcnn`  | `charcnn.py`       | torch                                   |
| `bytes`    | `bytes_encoder.py` | torch (+ transformers for ByT5 weights) |
| `fasttext` | `fasttext_model.py`| fasttext (`pip install fasttext-wheel`) |

Heavy packages are imported only when a model of that kind is built or loaded.
"""

from synth.trainers.papyrus.models.base import MODEL_KINDS, TextModel, build_model, load_model

__all__ = ["MODEL_KINDS", "TextModel", "build_model", "load_model"]

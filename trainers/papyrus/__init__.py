"""The Papyrus CER study: classifiers for the four papyrological tasks, keyword search, tolerance tables."""

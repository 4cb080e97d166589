"""Layers and operators that several zoo models share."""

"""queryloop.providers"""

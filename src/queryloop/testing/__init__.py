"""queryloop.testing"""

"""queryloop.cli"""

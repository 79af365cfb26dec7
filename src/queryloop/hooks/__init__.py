"""queryloop.hooks"""

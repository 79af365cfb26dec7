"""queryloop.context"""

"""queryloop.permissions"""

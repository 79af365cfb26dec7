"""queryloop.loop"""

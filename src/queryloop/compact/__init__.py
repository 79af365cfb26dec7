"""queryloop.compact"""

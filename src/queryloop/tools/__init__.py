"""queryloop.tools"""

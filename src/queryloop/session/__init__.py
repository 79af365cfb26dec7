"""queryloop.session"""

"""(exports are added as modules land)"""

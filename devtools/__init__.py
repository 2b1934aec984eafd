"""Loopback tooling shared by the tests, the benchmark and the load test: free ports,
waiting for a server to listen, and the stand-in for WhatsApp's Cloud API.

Not a Django app and not shipped: the service itself never imports it.
"""

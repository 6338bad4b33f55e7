#!/bin/sh
echo "hello from a reproducible image"

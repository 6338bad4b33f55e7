# escape=`
FROM scratch
RUN echo a `
  # a comment inside
  b
USER root

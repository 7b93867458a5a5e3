"""Tournament network: MQTT publishing from stations, the broker set-up, the referee dashboard
and the station's own web page. Overview, topic layout and figures: ``pi_app/net/README.md``."""

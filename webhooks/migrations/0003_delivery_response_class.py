"""Deliveries keep the answer's status class only: the exact code and the network's error words
of the old rows become the class and the fixed words of webhooks.sending."""

from django.db import migrations, models


def to_classes(apps, schema_editor):
    Delivery = apps.get_model("webhooks", "Delivery")
    for delivery in Delivery.objects.exclude(last_response_code=None, last_error="").iterator():
        code = delivery.last_response_code
        if code is not None and 200 <= code < 600:
            delivery.last_response = f"{code // 100}xx"
            if code >= 400:
                delivery.last_error = f"An HTTP {code // 100}xx answer."
            elif code >= 300:
                delivery.last_error = "A redirect (3xx): redirects are not followed."
            else:
                delivery.last_error = ""
        else:
            delivery.last_response = "no_response"
            if delivery.last_error == "address not allowed":
                delivery.last_error = "The address is not allowed (refused before connecting)."
            elif delivery.last_error:
                delivery.last_error = (
                    "No HTTP answer (the connection failed, timed out or its certificate did not verify)."
                )
        delivery.save(update_fields=["last_response", "last_error"])


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0002_schedule"),
    ]

    operations = [
        migrations.AddField(
            model_name="delivery",
            name="last_response",
            field=models.CharField(blank=True, max_length=12),
        ),
        migrations.RunPython(to_classes, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name="delivery",
            name="last_response_code",
        ),
    ]
